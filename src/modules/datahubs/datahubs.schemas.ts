import { Type } from 'typebox';
import { PageFields, Timestamp } from '../../http/schemas.js';
import { BUCKET_NAME_RULE } from '../buckets/buckets.names.js';
import { PageQuery } from '../folders/folders.schemas.js';

export const Datahub = Type.Object(
  {
    id: Type.String({ examples: ['dhb_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
    name: Type.String({ examples: ['Team archive'] }),
    locationId: Type.Integer({ description: 'id of a location of `GET /regions/{regionId}`', examples: [1] }),
    locationLabel: Type.String({ examples: ['Paris (fr-par)'] }),
    isDefault: Type.Boolean({ description: 'The datahub sign-up created for the account' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    buckets: Type.Array(Type.Ref('Bucket'), { description: 'Every bucket of the datahub, oldest first' }),
  },
  { $id: 'Datahub', title: 'Datahub' },
);

export const CreateDatahubBody = Type.Object(
  {
    name: Type.String({ maxLength: 1024, description: '1–255 UTF-8 bytes, no "/" or control characters', examples: ['Team archive'] }),
    locationId: Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'An active location (see `GET /regions/{regionId}`)',
      examples: [1],
    }),
    bucketName: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: `Name of the first bucket (${BUCKET_NAME_RULE}); default: the first free of "default", "default-2", …`,
        examples: ['team-archive'],
      }),
    ),
  },
  { examples: [{ name: 'Team archive', locationId: 1 }] },
);

export const DatahubListQuery = Type.Object(PageQuery);
export const DatahubPage = Type.Object({ data: Type.Array(Type.Ref('Datahub')), ...PageFields });

export const DatahubSize = Type.Object(
  {
    currentObjectsSize: Type.String({
      description: 'Current versions of every file not deleted for good (the trash included), human-readable',
      examples: ['1.5 GB'],
    }),
    versionsObjectsSize: Type.String({ description: 'Every other version of those files, human-readable', examples: ['200 MB'] }),
    totalSize: Type.String({ description: 'Current objects plus versions, human-readable', examples: ['1.7 GB'] }),
    currentObjectsBytes: Type.Integer({ description: 'currentObjectsSize in bytes', examples: [1610612736] }),
    versionsObjectsBytes: Type.Integer({ description: 'versionsObjectsSize in bytes', examples: [209715200] }),
    totalBytes: Type.Integer({ description: 'totalSize in bytes', examples: [1820327936] }),
  },
  {
    description: 'Sizes are 1024-based, units B KB MB GB TB PB, at most two decimals.',
    examples: [
      {
        currentObjectsSize: '1.5 GB',
        versionsObjectsSize: '200 MB',
        totalSize: '1.7 GB',
        currentObjectsBytes: 1610612736,
        versionsObjectsBytes: 209715200,
        totalBytes: 1820327936,
      },
    ],
  },
);
