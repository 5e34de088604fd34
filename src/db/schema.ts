import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/**
 * Row types of every table. Flags are 0/1 integers and timestamps ISO 8601 text, so one set of
 * queries serves SQLite and PostgreSQL alike. Row types stay inside repositories and services;
 * routes only see API objects.
 */
export interface Database {
  users: UsersTable;
  invitations: InvitationsTable;
  tokens: TokensTable;
  throttles: ThrottlesTable;
  regions: RegionsTable;
  locations: LocationsTable;
  datahubs: DatahubsTable;
  buckets: BucketsTable;
  folders: FoldersTable;
  files: FilesTable;
  share_links: ShareLinksTable;
  file_versions: FileVersionsTable;
  blobs: BlobsTable;
  permissions: PermissionsTable;
  job_leases: JobLeasesTable;
  upload_holds: UploadHoldsTable;
  link_passes: LinkPassesTable;
  dav_properties: DavPropertiesTable;
  dav_locks: DavLocksTable;
  resumable_uploads: ResumableUploadsTable;
  thumbnails: ThumbnailsTable;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  /** null: the server's default quota. */
  quota_bytes: number | null;
  default_datahub_id: string | null;
  default_bucket_id: string | null;
  /** Bytes of every version of every file not hard-deleted (trash included): the quota's use. */
  used_bytes: Generated<number>;
  /** Bytes the user's uploads in flight hold against the quota (the sum of their upload_holds rows). */
  held_bytes: Generated<number>;
  /** 1: an administrator (the first account is one). */
  is_admin: Generated<number>;
  /** When an administrator disabled the account; null while it may sign in. */
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface InvitationsTable {
  id: string;
  /** SHA-256 (hex) of the token in the invitation link; the token itself is never stored. */
  token_hash: string;
  /** `join`: a new account for `email`; `reset`: a new password for `user_id`. */
  purpose: 'join' | 'reset';
  email: string;
  user_id: string | null;
  /** The new account's quota (null: the server's default); `join` only. */
  quota_bytes: number | null;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface TokensTable {
  id: string;
  user_id: string;
  /** `session` from a login, `personal` for scripts. */
  kind: 'session' | 'personal';
  name: string;
  /** sha256 hex of the token; the token itself is never stored. */
  token_hash: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /** The User-Agent of the sign-in that opened a session (at most 512 characters); null for personal tokens. */
  user_agent: string | null;
  /** The client address a session was opened from; null for personal tokens. */
  client_address: string | null;
}

/** Fixed-window failure counters (logins now, link passwords later), shared by every instance. */
/** A background job's claim on one item (migration 005): free again after `lease_until`. */
export interface JobLeasesTable {
  job: string;
  item_id: string;
  lease_until: string;
}

/** One upload in flight's share of its owner's quota (migration 011): cleared by the upkeep after `expires_at`. */
export interface UploadHoldsTable {
  id: string;
  user_id: string;
  bytes: number;
  expires_at: string;
}

export interface ThrottlesTable {
  key: string;
  count: number;
  window_start_ms: number;
}

export interface RegionsTable {
  id: number;
  slug: string;
  name_en: string;
  name_fr: string;
  is_active: number;
}

export interface LocationsTable {
  id: number;
  region_id: number;
  region_code: string;
  country_code: string;
  name_en: string;
  name_fr: string;
  is_active: number;
}

export interface DatahubsTable {
  id: string;
  owner_id: string;
  name: string;
  location_id: number;
  created_at: string;
  updated_at: string;
}

export interface BucketsTable {
  id: string;
  datahub_id: string;
  owner_id: string;
  name: string;
  root_folder_id: string | null;
  /** The bucket key wrapped by the master key. */
  key_wrapped: string;
  created_at: string;
  updated_at: string;
}

export interface FoldersTable {
  id: string;
  bucket_id: string;
  owner_id: string;
  /** null only for a bucket's root folder. */
  parent_id: string | null;
  name: string;
  visibility: 'private' | 'public';
  /** 0 forbids new share links on the folder. */
  is_share: number;
  hash_url: string;
  /** The folder key wrapped by its parent's key (a root folder's by the bucket key). */
  key_wrapped: string;
  is_root: number;
  /**
   * '' while live. When a folder is trashed, it and its live subtree get the trashed folder's id
   * here, so a restore brings back exactly what went to the trash together.
   */
  trash_batch: Generated<string>;
  deleted_at: string | null;
  /**
   * Aggregates over the descendants that share this folder's `trash_batch` (for a live folder:
   * its live subtree). Kept exact by every mutation, in the same transaction.
   */
  subtree_files: Generated<number>;
  subtree_folders: Generated<number>;
  subtree_bytes: Generated<number>;
  /** Direct children sharing this folder's `trash_batch`: the `total` of a listing, without a COUNT. */
  child_folders: Generated<number>;
  child_files: Generated<number>;
  /** Bumped by triggers whenever a listed field of a child changes (migration 007, listing.cache.ts). */
  listing_version: Generated<number>;
  last_access_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ShareLinksTable {
  id: string;
  shared_hash: string;
  kind: 'file' | 'folder';
  file_id: string | null;
  folder_id: string | null;
  owner_id: string;
  /** The file's (or folder's) key wrapped by the link key, with the link id as associated data. */
  key_wrapped: string;
  password_hash: string | null;
  expires_at: string | null;
  max_access: number;
  access_count: Generated<number>;
  can_view: number;
  can_download: number;
  can_edit: number;
  is_public: number;
  revoked_at: string | null;
  /** SHA-256 (hex) of the link's key proof (migration 013); null on older links. */
  key_check: string | null;
  /** The link key wrapped by the item's key, for its owner to copy the link again (migration 018); null on older links. */
  link_key_wrapped: string | null;
  created_at: string;
  updated_at: string;
}

/** A resume pass of a file link's download, or of a folder link's open (migration 013, links/links.passes.ts). */
export interface LinkPassesTable {
  token_hash: string;
  link_id: string;
  /** The version a file link's pass resumes; the shared folder's id for a folder link's. */
  version_id: string;
  state: 'held' | 'spent' | 'released';
  in_flight: number;
  expires_at: string;
  created_at: string;
}

/** A dead property a WebDAV client set on a file or folder (migration 014). */
export interface DavPropertiesTable {
  item_id: string;
  /** Clark notation: `{namespace}local`. */
  name: string;
  /** The property element as XML text. */
  value: string;
}

/** A WebDAV write lock (migration 014, dav/dav.locks.ts). */
export interface DavLocksTable {
  /** `urn:uuid:…`, as the client sends it back in If and Lock-Token headers. */
  token: string;
  user_id: string;
  /** The file or folder the lock is rooted on. */
  item_id: string;
  depth: '0' | 'infinity';
  scope: 'exclusive' | 'shared';
  owner_xml: string | null;
  timeout_seconds: number;
  expires_at: string;
  created_at: string;
}

/** A resumable (tus) upload (migration 015, modules/uploads/). */
export interface ResumableUploadsTable {
  id: string;
  user_id: string;
  folder_id: string;
  name: string;
  content_type: string;
  on_conflict: 'version' | 'rename' | 'fail';
  metadata: string;
  length: number | string | null;
  received: number | string;
  blob_id: string;
  data_key_wrapped: string;
  /** Base64 of the blob's 16-byte stream header. */
  header: string;
  /** Base64 of the sealed tail record (content/resumable.ts). */
  tail: string;
  staging: string;
  state: 'open' | 'done';
  file_id: Generated<string>;
  lock_token: Generated<string>;
  locked_until: Generated<string>;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

export interface FilesTable {
  id: string;
  bucket_id: string;
  folder_id: string;
  owner_id: string;
  name: string;
  content_type: string;
  visibility: 'private' | 'public';
  retention_period: string | null;
  retain_until: string | null;
  /** URL-safe random identifier (public links to files of shared folders, `/files/public/`). */
  hash_name: string;
  /** The file key wrapped by its folder's key. */
  key_wrapped: string;
  current_version_id: string | null;
  /** Size and checksum of the current version (denormalised for listings and aggregates). */
  size: number;
  checksum: string;
  version_count: number;
  /** Sum of the sizes of every version, current included: what the file costs its owner's quota. */
  versions_bytes: number;
  /** '' while live; the id of the trashed file or folder it went to the trash with. */
  trash_batch: Generated<string>;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface FileVersionsTable {
  id: string;
  file_id: string;
  blob_id: string;
  size: number;
  checksum: string;
  /** CRC-32 of the plaintext (zip archives); null for versions older than migration 016, until first needed. */
  crc32: number | null;
  content_type: string;
  /** The blob's data key wrapped by the file key (associated data: this version's id). */
  data_key_wrapped: string;
  created_at: string;
}

export interface BlobsTable {
  /** Also the key in the blob store. */
  id: string;
  state: 'uploading' | 'ready' | 'deleting';
  /** Versions using this blob; at 0 the collector deletes it. */
  ref_count: number;
  stored_size: number;
  /** The stored bytes of a small blob, kept here instead of the blob store (null: in the store). */
  content: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  created_at: string;
  updated_at: string;
}

/** The thumbnail of an image version (migration 020, modules/thumbnails/). */
export interface ThumbnailsTable {
  version_id: string;
  file_id: string;
  state: 'pending' | 'done' | 'failed';
  /** Claims so far; a row claimed this many times without success is failed. */
  attempts: Generated<number>;
  /** The lease of the job making it (ISO 8601); after it another job may claim the row. */
  claimed_until: string | null;
  blob_id: string | null;
  /** The thumbnail's data key wrapped by the file key (associated data: `thumbnail:<version id>`). */
  data_key_wrapped: string | null;
  /** Plaintext bytes of the thumbnail. */
  size: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  updated_at: string;
}

/** A user's permission on a file or a folder (a folder's covers its whole subtree). */
export interface PermissionsTable {
  id: string;
  item_kind: 'file' | 'folder';
  item_id: string;
  owner_id: string;
  /** The grantee. */
  user_id: string;
  can_view: number;
  can_download: number;
  can_edit: number;
  created_at: string;
  updated_at: string;
}

export type PermissionRow = Selectable<PermissionsTable>;
export type NewPermission = Insertable<PermissionsTable>;
export type UserRow = Selectable<UsersTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type NewUser = Insertable<UsersTable>;
export type FileRow = Selectable<FilesTable>;
export type ShareLinkRow = Selectable<ShareLinksTable>;
export type LinkPassRow = Selectable<LinkPassesTable>;
export type NewFile = Insertable<FilesTable>;
export type FileVersionRow = Selectable<FileVersionsTable>;
export type TokenRow = Selectable<TokensTable>;
export type DatahubRow = Selectable<DatahubsTable>;
export type BucketRow = Selectable<BucketsTable>;
export type FolderRow = Selectable<FoldersTable>;
export type NewFolder = Insertable<FoldersTable>;
export type LocationRow = Selectable<LocationsTable>;
export type RegionRow = Selectable<RegionsTable>;
export type DavLockRow = Selectable<DavLocksTable>;
export type ResumableUploadRow = Selectable<ResumableUploadsTable>;
