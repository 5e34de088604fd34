import { Type, type Static } from 'typebox';
import type { FileDetail } from '../files/files.schemas.js';
import type { FolderListItem } from '../folders/folders.schemas.js';
import { idPattern } from '../../lib/ids.js';
import { Timestamp } from '../../http/schemas.js';
import { PageQuery } from '../folders/folders.schemas.js';
import { MAX_GRANTEES } from './permissions.service.js';

const UserId = Type.String({ maxLength: 64, examples: ['usr_01jd3kq8m7c9x4v2b6n0p5r8st'] });

const flags = {
  canView: Type.Optional(Type.Boolean({ default: true, description: 'See details and listings' })),
  canDownload: Type.Optional(Type.Boolean({ default: true, description: 'Read the content' })),
  canEdit: Type.Optional(
    Type.Boolean({ default: false, description: 'Rename, update, upload, create subfolders, move within the shared tree, soft delete' }),
  ),
};

export const FileIdParams = Type.Object({ fileId: Type.String({ pattern: idPattern('fil') }) });
export const FolderIdParams = Type.Object({ folderId: Type.String({ pattern: idPattern('fld') }) });
export const FileUsersParams = Type.Object({
  fileId: Type.String({ pattern: idPattern('fil') }),
  userIds: Type.String({
    maxLength: 64 * MAX_GRANTEES,
    description: `One user id or up to ${MAX_GRANTEES} comma-separated ones`,
    examples: ['usr_01jd3kq8m7c9x4v2b6n0p5r8st,usr_01jd3kr2a4b6c8d0e2f4g6h8jk'],
  }),
});
export const FileUserParams = Type.Object({ fileId: Type.String({ pattern: idPattern('fil') }), userId: UserId });
export const FolderUserParams = Type.Object({ folderId: Type.String({ pattern: idPattern('fld') }), userId: UserId });

export const GrantBody = Type.Object(
  {
    ...flags,
    createOrUpdate: Type.Optional(
      Type.Boolean({ default: true, description: 'false: only update existing permissions (404 when one is absent)' }),
    ),
  },
  { examples: [{ canView: true, canDownload: false, canEdit: false }] },
);

const Grant = Type.Object({ userId: UserId, ...flags });
/** One grant to make; omitted flags take the defaults of the API contract. */
export type Grant = Static<typeof Grant>;

export const ShareUsersBody = Type.Object(
  { users: Type.Array(Grant, { minItems: 1, maxItems: MAX_GRANTEES }) },
  { examples: [{ users: [{ userId: 'usr_01jd3kq8m7c9x4v2b6n0p5r8st', canView: true, canDownload: true, canEdit: true }] }] },
);

export const Permission = Type.Object(
  {
    userId: Type.String(),
    canView: Type.Boolean(),
    canDownload: Type.Boolean(),
    canEdit: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    examples: [
      {
        userId: 'usr_01jd3kq8m7c9x4v2b6n0p5r8st',
        canView: true,
        canDownload: true,
        canEdit: false,
        createdAt: '2026-11-22T13:17:04.123Z',
        updatedAt: '2026-11-22T13:17:04.123Z',
      },
    ],
  },
);
export type Permission = Static<typeof Permission>;

export const ShareUser = Type.Object(
  {
    userId: Type.String(),
    email: Type.String(),
    name: Type.String(),
    canView: Type.Boolean(),
    canDownload: Type.Boolean(),
    canEdit: Type.Boolean(),
    createdAt: Timestamp,
  },
  {
    examples: [
      {
        userId: 'usr_01jd3kq8m7c9x4v2b6n0p5r8st',
        email: 'ada@example.com',
        name: 'Ada',
        canView: true,
        canDownload: true,
        canEdit: false,
        createdAt: '2026-11-22T13:17:04.123Z',
      },
    ],
  },
);
export type ShareUser = Static<typeof ShareUser>;

export const SharedItem = Type.Object({
  itemType: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
  itemId: Type.String(),
  name: Type.String(),
  owner: Type.Object({ userId: Type.String(), name: Type.String(), email: Type.String() }),
  permission: Type.Object({ canView: Type.Boolean(), canDownload: Type.Boolean(), canEdit: Type.Boolean() }),
  sharedAt: Timestamp,
  folder: Type.Union([Type.Ref('FolderListItem'), Type.Null()], { description: 'The folder, for `itemType` folder' }),
  file: Type.Union([Type.Ref('FileDetail'), Type.Null()], { description: 'The file, for `itemType` file' }),
});
/** An item of `GET /shared-with-me`: `folder` and `file` are written by reference, so the type names them. */
export type SharedItem = Omit<Static<typeof SharedItem>, 'folder' | 'file'> & { folder: FolderListItem | null; file: FileDetail | null };

export const SharedWithMePage = Type.Object({
  data: Type.Array(SharedItem),
  total: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const SharedWithMeQuery = Type.Object(PageQuery);
