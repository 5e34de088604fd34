import { Type, type Static } from 'typebox';
import { MAX_PAGE_SIZE } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { NullableTimestamp, Timestamp, Visibility } from '../../http/schemas.js';

// Ids in bodies are checked by the service, so a malformed one is INVALID_ID like in a path.
const IdInBody = Type.String({ maxLength: 64, examples: ['fld_01jd3kq8m7c9x4v2b6n0p5r8st'] });
const ItemName = Type.String({
  maxLength: 1024,
  description: '1–255 UTF-8 bytes; no "/", no control characters, not "." or ".."',
  examples: ['Documents'],
});

export const FolderDetail = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    visibility: Visibility,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastAccessAt: NullableTimestamp,
    totalFiles: Type.Integer({ description: 'Live files in the whole subtree' }),
    totalSubfolders: Type.Integer({ description: 'Live folders in the whole subtree' }),
    totalSizeByte: Type.Integer({ description: 'Bytes of the current versions of the live files of the subtree' }),
    sharedUsersCount: Type.Integer(),
    ownerFolder: Type.Union([Type.Object({ userId: Type.String(), name: Type.String() }), Type.Null()], {
      description: 'null for your own folder; the owner for a folder shared with you',
    }),
    displayPath: Type.String({
      description: 'For a folder shared with you, from the highest folder shared with you',
      examples: ['/Documents/2026'],
    }),
    locationLabel: Type.String({ examples: ['Paris (fr-par)'] }),
    parentId: Type.String({
      description: '"" for the root folder, and for the highest folder shared with you (its parent is not yours to see)',
    }),
    parentName: Type.String({ description: '"" where parentId is ""' }),
    isRoot: Type.Boolean(),
    accessUrl: Type.String({ examples: ['/folders/details/fld_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
    shareUrl: Type.String({ examples: ['/folders/share/fld_01jd3kq8m7c9x4v2b6n0p5r8st'] }),
    bucketId: Type.String(),
    hashUrl: Type.String(),
    isDelete: Type.Boolean(),
    deletedAt: NullableTimestamp,
  },
  { $id: 'FolderDetail', title: 'FolderDetail' },
);
export type FolderDetail = Static<typeof FolderDetail>;

const folderListItemFields = {
  id: Type.String(),
  bucketId: Type.String(),
  parentId: Type.String({ description: '"" for a root folder, and in /shared-with-me for a folder whose parent is not shared with you' }),
  hashUrl: Type.String(),
  name: Type.String(),
  visibility: Visibility,
  isDelete: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: NullableTimestamp,
};

export const FolderListItem = Type.Object(folderListItemFields, { $id: 'FolderListItem', title: 'FolderListItem' });
export type FolderListItem = Static<typeof FolderListItem>;

export const FolderIdParams = Type.Object({ folderId: Type.String({ pattern: idPattern('fld') }) });

export const FolderAccess = Type.Object(
  {
    isOwner: Type.Boolean(),
    canView: Type.Boolean(),
    canDownload: Type.Boolean({ description: 'Download its files, and the folder as a zip' }),
    canEdit: Type.Boolean({ description: 'Create, upload, rename, move and move to the trash inside it' }),
  },
  { $id: 'FolderAccess', title: 'FolderAccess' },
);
export type FolderAccess = Static<typeof FolderAccess>;
export const FolderIdOrRootParams = Type.Object({
  folderId: Type.String({ pattern: `^root$|${idPattern('fld')}`, description: 'A folder id, or `root` for the root of a bucket' }),
});
export const BucketIdParams = Type.Object({ bucketId: Type.String({ pattern: idPattern('bkt') }) });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 1024, description: '`nextCursor` of the previous page' })),
};
export const SubfoldersQuery = Type.Object({
  ...PageQuery,
  bucketId: Type.Optional(
    Type.String({ pattern: idPattern('bkt'), description: 'With `root`: the bucket whose root to list (default: your default bucket)' }),
  ),
});
export type SubfoldersQuery = Static<typeof SubfoldersQuery>;
export const ListQuery = Type.Object(PageQuery);
export type ListQuery = Static<typeof ListQuery>;

export const SubfoldersPage = Type.Object({
  data: Type.Array(Type.Ref('FolderListItem')),
  total: Type.Integer(),
  parentFolder: Type.Object({ id: Type.String(), name: Type.String(), bucketId: Type.String() }),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export const BucketFoldersPage = Type.Object({
  data: Type.Array(Type.Object({ ...folderListItemFields, displayPath: Type.String() })),
  total: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export type BucketFoldersPage = Static<typeof BucketFoldersPage>;

export const CreateFolderBody = Type.Object({
  name: ItemName,
  parentId: Type.Optional(IdInBody),
  visibility: Type.Optional(Visibility),
});
export type CreateFolderBody = Static<typeof CreateFolderBody>;
export const UpdateFolderBody = Type.Object(
  {
    name: Type.Optional(ItemName),
    visibility: Type.Optional(Visibility),
    isPrivate: Type.Optional(Type.Boolean({ description: 'true = private, false = public (form A of the API contract)' })),
    isShare: Type.Optional(Type.Boolean({ description: 'false forbids new share links on the folder' })),
  },
  { description: 'Both forms of the API contract in one body; at least one field' },
);
export type UpdateFolderBody = Static<typeof UpdateFolderBody>;
export const TrashMode = Type.String({ maxLength: 16, description: '`soft` (default, to the trash) or `hard` (for good)' });
export const DeleteFolderQuery = Type.Object({ trash: Type.Optional(TrashMode) });
export const MoveFolderBody = Type.Object({ targetParentId: IdInBody });
export type MoveFolderBody = Static<typeof MoveFolderBody>;
export const CopyFolderBody = Type.Object({ targetParentId: IdInBody, name: Type.Optional(ItemName) });
export type CopyFolderBody = Static<typeof CopyFolderBody>;
