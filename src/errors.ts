/**
 * The one catalog of error codes. Every 4xx/5xx the service sends carries one of these codes;
 * services throw `AppError`s naming a code, lower layers `InternalError`s for failures of the
 * server's own, and the single error handler (src/http/error-handler.ts) turns them into the
 * envelope `{status, message, code, data: null}`.
 */
export const ERROR_CATALOG = {
  // Generic request problems
  VALIDATION_FAILED: { status: 400, message: 'The request is not valid' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON' },
  INVALID_ID: { status: 400, message: 'The id is malformed' },
  INVALID_NAME: { status: 400, message: 'The name is not allowed' },
  EMPTY_UPDATE: { status: 400, message: 'The update changes nothing: give at least one field' },
  INVALID_TRASH_MODE: { status: 400, message: 'trash must be "soft" or "hard"' },
  INVALID_CURSOR: { status: 400, message: 'The pagination cursor is not valid' },
  SEARCH_QUERY_TOO_SHORT: { status: 400, message: 'Search for at least 3 characters' },
  MALFORMED_REQUEST: { status: 400, message: 'The HTTP request is malformed' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such route' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported content type' },
  RATE_LIMITED: { status: 429, message: 'Too many attempts, try again later' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The URL or the request headers are too large' },
  INTERNAL_ERROR: { status: 500, message: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is not ready' },

  // Accounts and authentication
  UNAUTHENTICATED: { status: 401, message: 'A valid bearer token is required' },
  INVALID_CREDENTIALS: { status: 401, message: 'Wrong e-mail or password' },
  REGISTRATION_CLOSED: { status: 403, message: 'Registration is closed on this server' },
  EMAIL_TAKEN: { status: 409, message: 'An account with this e-mail already exists' },
  USER_NOT_FOUND: { status: 404, message: 'User not found' },
  TOKEN_NOT_FOUND: { status: 404, message: 'Token not found' },
  SESSION_NOT_FOUND: { status: 404, message: 'Session not found' },
  WRONG_CURRENT_PASSWORD: { status: 403, message: 'The current password is wrong' },
  ACCOUNT_DISABLED: { status: 403, message: 'This account is disabled: ask an administrator of this server' },
  ADMIN_ONLY: { status: 403, message: 'Only an administrator of this server may do this' },
  OWN_ACCOUNT: { status: 409, message: 'You cannot disable your own account' },
  INVITATION_NOT_FOUND: { status: 404, message: 'This invitation link is not valid' },
  INVITATION_USED: { status: 410, message: 'This invitation link was used already: ask for a new one' },
  INVITATION_EXPIRED: { status: 410, message: 'This invitation link has expired: ask for a new one' },

  // Storage hierarchy
  DATAHUB_NOT_FOUND: { status: 404, message: 'Datahub not found' },
  BUCKET_NOT_FOUND: { status: 404, message: 'Bucket not found' },
  LOCATION_NOT_FOUND: { status: 404, message: 'Location not found' },
  LOCATION_INACTIVE: { status: 400, message: 'This location does not take new datahubs' },
  REGION_NOT_FOUND: { status: 404, message: 'Region not found' },
  BUCKET_NOT_EMPTY: { status: 409, message: 'The bucket still holds folders or files (the trash included); empty it first' },
  DEFAULT_BUCKET: { status: 409, message: 'The default bucket of your account cannot be deleted' },

  // Folders
  FOLDER_NOT_FOUND: { status: 404, message: 'Folder not found' },
  FOLDER_ACCESS_DENIED: { status: 401, message: 'You are not authorized for this folder' },
  FOLDER_FORBIDDEN: { status: 403, message: 'You do not have permission to read this folder' },
  NAME_CONFLICT: { status: 409, message: 'An item with this name already exists here' },
  INVALID_MOVE: { status: 400, message: 'A folder cannot be moved or copied into itself or one of its subfolders' },
  ROOT_FOLDER_READONLY: { status: 400, message: 'The root folder of a bucket cannot be renamed, moved, shared or deleted' },
  FOLDER_IN_TRASH: { status: 409, message: 'The folder is in the trash; restore it first' },
  NOT_IN_TRASH: { status: 409, message: 'The item is not in the trash' },
  VISIBILITY_CONFLICT: { status: 400, message: 'visibility and isPrivate disagree' },

  // Files
  FILE_NOT_FOUND: { status: 404, message: 'File not found' },
  VERSION_NOT_FOUND: { status: 404, message: 'Version not found' },
  THUMBNAIL_NOT_FOUND: { status: 404, message: 'No thumbnail (not an image, or the image could not be read)' },
  THUMBNAIL_PENDING: { status: 404, message: 'The thumbnail is being made: ask again in a few seconds' },
  FILE_IN_TRASH: { status: 409, message: 'The file is in the trash; restore it first' },
  VERSION_IS_CURRENT: { status: 409, message: 'The current version cannot be deleted; delete the file or restore another version first' },
  NO_FILE_IN_UPLOAD: { status: 400, message: 'The upload holds no file part' },
  MISSING_FILE_NAME: { status: 400, message: 'Give the file name: ?name= for a raw upload, or a filename in the multipart part' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is outside the file' },
  RETENTION_ACTIVE: { status: 409, message: 'A file under retention cannot be deleted for good before its retention ends' },
  RETENTION_SHORTENING: { status: 409, message: 'A retention period can be extended, never shortened' },
  QUOTA_EXCEEDED: { status: 507, message: 'Your storage quota is full' },
  CONTENT_INTEGRITY: { status: 500, message: 'The stored content failed its integrity check' },
  CONTENT_MISSING: { status: 500, message: 'The stored content is missing' },
  EMPTY_SELECTION: { status: 400, message: 'Select at least one file or folder' },
  SELECTION_TOO_LARGE: { status: 400, message: 'A selection holds at most 1000 ids; download a folder to get more' },
  INVALID_SELECTION: { status: 400, message: 'Every id must name a live file or folder you can see' },
  SELECTION_SPANS_FOLDERS: { status: 400, message: 'The selected items must all be in one folder' },
  DOWNLOAD_FORBIDDEN: { status: 403, message: 'You may not download these items' },
  ARCHIVE_ITEM_GONE: { status: 409, message: 'An item of the archive was deleted while it streamed' },

  // Share links
  LINK_NOT_FOUND: { status: 404, message: 'Shared link not found' },
  LINK_REVOKED: { status: 410, message: 'This link was revoked' },
  LINK_EXPIRED: { status: 410, message: 'This link has expired' },
  LINK_EXHAUSTED: { status: 410, message: 'This link has reached its access limit' },
  LINK_KEY_NOT_KEPT: { status: 409, message: 'This link was made before links could be copied again: make a new one' },
  PASSWORD_REQUIRED: { status: 401, message: 'This link is protected by a password' },
  INVALID_PASSWORD: { status: 403, message: 'Wrong password for this link' },
  INVALID_ENCRYPTION_KEY: { status: 403, message: 'The encryption key is missing or does not open this link' },
  DOWNLOAD_NOT_ALLOWED: { status: 403, message: 'This link does not allow downloads' },
  PREVIEW_NOT_SUPPORTED: { status: 415, message: 'This type of file cannot be previewed' },
  VIEW_NOT_ALLOWED: { status: 403, message: 'This link does not allow viewing its content' },
  SHARING_DISABLED: { status: 409, message: 'Sharing is turned off for this folder' },
  // WebDAV (src/modules/dav/): these leave as a DAV:error XML body, not the JSON envelope.
  DAV_MALFORMED_XML: { status: 400, message: 'The XML body is malformed' },
  DAV_XML_DOCTYPE: { status: 400, message: 'XML bodies with a DOCTYPE or entity declarations are refused' },
  DAV_XML_TOO_LARGE: { status: 413, message: 'The XML body is too large' },
  DAV_BAD_PATH: { status: 400, message: 'The path holds a segment that is not allowed (.., NUL, control characters, an encoded /)' },
  DAV_BAD_HEADER: { status: 400, message: 'A WebDAV request header is malformed' },
  DAV_OTHER_SERVER: { status: 502, message: 'The Destination is on another server or outside /dav/' },
  DAV_NOT_FOUND: { status: 404, message: 'No such resource' },
  DAV_PARENT_MISSING: { status: 409, message: 'The parent collection does not exist' },
  DAV_INTO_ITSELF: { status: 409, message: 'A collection cannot be moved or copied into itself' },
  DAV_FORBIDDEN: { status: 403, message: 'You may not change this resource' },
  DAV_FINITE_DEPTH: { status: 403, message: 'PROPFIND with Depth: infinity is not supported; use Depth 0 or 1' },
  DAV_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this resource' },
  DAV_BODY_NOT_ALLOWED: { status: 415, message: 'MKCOL takes no body' },
  DAV_PRECONDITION_FAILED: { status: 412, message: 'A precondition of the request failed' },
  DAV_LOCKED: { status: 423, message: 'The resource is locked' },
  DAV_NO_LOCK: { status: 409, message: 'No such lock on this resource' },
  DAV_LOCK_CONFLICT: { status: 423, message: 'A conflicting lock is held on this resource' },
  DAV_NOT_LOCK_OWNER: { status: 403, message: 'This lock belongs to another user' },

  // Resumable uploads (tus 1.0.0, /api/uploads/)
  TUS_VERSION_UNSUPPORTED: { status: 412, message: 'Tus-Resumable must be 1.0.0' },
  UPLOAD_NOT_FOUND: { status: 404, message: 'Upload not found' },
  UPLOAD_FINISHED: { status: 410, message: 'This upload is finished; its file exists' },
  UPLOAD_EXPIRED: { status: 410, message: 'This upload expired and was removed' },
  UPLOAD_OFFSET_MISMATCH: { status: 409, message: 'Upload-Offset is not where the upload stands; ask with HEAD' },
  UPLOAD_BUSY: { status: 423, message: 'Another request is writing to this upload; try again shortly' },
  UPLOAD_BAD_HEADER: { status: 400, message: 'A tus request header is missing or malformed' },
  UPLOAD_BAD_METADATA: { status: 400, message: 'Upload-Metadata is malformed or lacks folderId or filename' },
  UPLOAD_LENGTH_EXCEEDED: { status: 413, message: 'The request brings more bytes than Upload-Length' },
  UPLOAD_CHECKSUM_UNSUPPORTED: {
    status: 400,
    message: 'Upload-Checksum names an algorithm this server does not support (sha1, sha256, md5)',
  },
  UPLOAD_CHECKSUM_MISMATCH: { status: 460, message: 'The request body does not match Upload-Checksum; nothing of it was kept' },

  // Per-user permissions
  PERMISSION_NOT_FOUND: { status: 404, message: 'This user holds no permission on this item' },
  SHARE_WITH_SELF: { status: 400, message: 'You cannot share an item with yourself' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorDetail {
  field: string;
  problem: string;
}

/** An expected failure with a catalog code; safe to show to the client. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = 'AppError';
    this.status = ERROR_CATALOG[code].status;
  }
}

/**
 * A failure of the server's own that the catalog names (stored content damaged or lost): the
 * client gets the code and the catalog's message, never this error's own message, which says
 * what went wrong for the log only.
 */
export class InternalError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'InternalError';
  }
}
