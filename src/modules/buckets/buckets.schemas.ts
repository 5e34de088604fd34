import { Type, type Static } from 'typebox';
import { idPattern } from '../../lib/ids.js';
import { PageFields, Timestamp } from '../../http/schemas.js';
import { PageQuery } from '../folders/folders.schemas.js';
import { BUCKET_NAME_RULE } from './buckets.names.js';

const BUCKET_EXAMPLE = {
  id: 'bkt_01jd3kq8m7c9x4v2b6n0p5r8st',
  name: 'photos-2026',
  datahubId: 'dhb_01jd3kq8m7c9x4v2b6n0p5r8st',
  rootFolderId: 'fld_01jd3kq8m7c9x4v2b6n0p5r8st',
  isDefault: false,
  createdAt: '2026-11-22T13:17:04.123Z',
  updatedAt: '2026-11-22T13:17:04.123Z',
};

export const Bucket = Type.Object(
  {
    id: Type.String({ examples: [BUCKET_EXAMPLE.id] }),
    name: Type.String({ description: BUCKET_NAME_RULE, examples: [BUCKET_EXAMPLE.name] }),
    datahubId: Type.String({ examples: [BUCKET_EXAMPLE.datahubId] }),
    rootFolderId: Type.String({
      description: 'The root folder (`isRoot: true`), named like the bucket',
      examples: [BUCKET_EXAMPLE.rootFolderId],
    }),
    isDefault: Type.Boolean({
      description: "The account's default bucket (what `GET /folders/root/subfolders` lists); it cannot be deleted",
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Bucket', title: 'Bucket', examples: [BUCKET_EXAMPLE] },
);
export type Bucket = Static<typeof Bucket>;

export const BucketName = Type.String({ maxLength: 1024, description: BUCKET_NAME_RULE, examples: ['photos-2026'] });

export const DatahubIdParams = Type.Object({
  datahubId: Type.String({ pattern: idPattern('dhb'), examples: ['dhb_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
});
export const BucketIdParams = Type.Object({ bucketId: Type.String({ pattern: idPattern('bkt'), examples: [BUCKET_EXAMPLE.id] }) });

export const CreateBucketBody = Type.Object({ name: BucketName }, { examples: [{ name: 'photos-2026' }] });
export const UpdateBucketBody = Type.Object(
  { name: Type.Optional(BucketName) },
  { description: 'The new name; leaving it out is 400 (there is nothing else to change)', examples: [{ name: 'archive-2026' }] },
);

export const BucketListQuery = Type.Object({
  ...PageQuery,
  datahubId: Type.Optional(
    Type.String({ pattern: idPattern('dhb'), description: 'Only the buckets of this datahub (default: all of yours)' }),
  ),
});

export const BucketPage = Type.Object({ data: Type.Array(Type.Ref('Bucket')), ...PageFields });
