import { Type, type Static } from 'typebox';
import { MAX_PAGE_SIZE } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { NullableTimestamp, Timestamp, Visibility } from '../../http/schemas.js';
import { RETENTION_PERIODS } from './files.retention.js';

// A union built from a list is typed as no value at all: Unsafe states the literals' type.
export const RetentionPeriod = Type.Unsafe<(typeof RETENTION_PERIODS)[number]>(
  Type.Union(
    RETENTION_PERIODS.map((p) => Type.Literal(p)),
    { description: '`d` = days, `Y` = 365 days' },
  ),
);
export type RetentionPeriod = Static<typeof RetentionPeriod>;
const IdInBody = Type.String({ maxLength: 64 });
const ItemName = Type.String({ maxLength: 1024, description: '1–255 UTF-8 bytes; no "/", no control characters, not "." or ".."' });

export const FileDetail = Type.Object(
  {
    id: Type.String({ examples: ['fil_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
    name: Type.String(),
    size: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    folderId: Type.String({ description: '"" for a file shared with you whose folder is not' }),
    bucketId: Type.String(),
    contentType: Type.String(),
    visibility: Visibility,
    retentionPeriod: Type.Union([RetentionPeriod, Type.Null()]),
    retainUntil: NullableTimestamp,
    hashName: Type.String(),
    checksum: Type.String({ description: '`sha256:<hex>` of the content; "" for a file shared with you that you may not download' }),
    versionCount: Type.Integer(),
    currentVersionId: Type.Optional(
      Type.String({ description: "The current version's id: `?v=` of the thumbnail route, whose answer is then cached for a year" }),
    ),
    isDelete: Type.Boolean(),
    deletedAt: NullableTimestamp,
  },
  { $id: 'FileDetail', title: 'FileDetail' },
);
export type FileDetail = Static<typeof FileDetail>;

export const Version = Type.Object({
  id: Type.String(),
  size: Type.Integer(),
  checksum: Type.String({ description: '`sha256:<hex>` of the content; "" for a file shared with you that you may not download' }),
  contentType: Type.String(),
  createdAt: Timestamp,
  isCurrent: Type.Boolean(),
});
export type Version = Static<typeof Version>;

export const FileIdParams = Type.Object({ fileId: Type.String({ pattern: idPattern('fil') }) });
export const FolderIdParams = Type.Object({ folderId: Type.String({ pattern: idPattern('fld') }) });
export const VersionParams = Type.Object({
  fileId: Type.String({ pattern: idPattern('fil') }),
  versionId: Type.String({ pattern: idPattern('ver') }),
});
export const HashNameParams = Type.Object({ hashName: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) });

const OnConflict = Type.Union([Type.Literal('version'), Type.Literal('rename'), Type.Literal('fail')], {
  default: 'version',
  description: 'An existing name: add a version (default), pick a free name, or fail with 409',
});
export type OnConflict = Static<typeof OnConflict>;
export const UploadQuery = Type.Object({ onConflict: Type.Optional(OnConflict) });
export const RawUploadQuery = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 1024, description: 'Name of the file' }),
  onConflict: UploadQuery.properties.onConflict,
});
export const DownloadQuery = Type.Object({ versionId: Type.Optional(Type.String({ maxLength: 64 })) });
export const PreviewQuery = Type.Object({
  versionId: Type.Optional(Type.String({ maxLength: 64 })),
  ticket: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'From `GET /files/preview-address/{fileId}`: stands for the bearer token, for this preview only',
    }),
  ),
});
export const PreviewAddress = Type.Object({
  url: Type.String({ description: 'The preview route with a ticket: works without the bearer token (for `<audio>` and `<video>`)' }),
  expiresAt: Type.String({ format: 'date-time' }),
});
export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 1024 })),
  sort: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('createdAt'), Type.Literal('size')], { default: 'name' })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
});
export type ListQuery = Static<typeof ListQuery>;
export const FilePage = Type.Object({
  data: Type.Array(Type.Ref('FileDetail')),
  total: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
/** A page of files: `data` is written by reference to FileDetail, so the type says so itself. */
export type FilePage = Omit<Static<typeof FilePage>, 'data'> & { data: FileDetail[] };
export const UpdateFileBody = Type.Object({
  name: ItemName,
  visibility: Visibility,
  retentionPeriod: Type.Optional(RetentionPeriod),
});
export type UpdateFileBody = Static<typeof UpdateFileBody>;
export const MoveFileBody = Type.Object({ targetFolderId: IdInBody, name: Type.Optional(ItemName) });
export type MoveFileBody = Static<typeof MoveFileBody>;
export const TrashQuery = Type.Object({ trash: Type.Optional(Type.String({ maxLength: 16 })) });
