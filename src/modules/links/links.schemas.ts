import { MAX_PAGE_SIZE } from '../../lib/cursor.js';
import { Type } from 'typebox';
import { NullableTimestamp } from '../../http/schemas.js';

export const SharedHashParams = Type.Object({
  sharedHash: Type.String({ minLength: 1, maxLength: 64, description: 'The link identifier from the share link' }),
});

const days = Type.Integer({ minimum: 0, maximum: 36500, description: 'Days from now until the link expires; 0 = never' });
const accesses = Type.Integer({
  minimum: 0,
  maximum: 1_000_000_000,
  description: 'Successful downloads (file link) or opens (folder link) allowed; 0 = unlimited',
});

export const CreateLinkBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'Asked of every visitor; hashed with Argon2id' })),
    expirationDays: Type.Optional(days),
    maxAccess: Type.Optional(accesses),
    canView: Type.Optional(Type.Boolean({ default: true })),
    canDownload: Type.Optional(Type.Boolean({ default: true })),
    canEdit: Type.Optional(Type.Boolean({ default: false })),
    isPublic: Type.Optional(Type.Boolean({ default: true, description: 'false: visitors must also be signed in' })),
  },
  {
    additionalProperties: false,
    examples: [{ password: 'correct horse', expirationDays: 7, maxAccess: 10, canDownload: true, isPublic: true }],
  },
);

export const LinkAddress = Type.Object(
  { shareLink: Type.String({ description: '`<public URL>/s/<sharedHash>#<linkKey>`, as when the link was made' }) },
  { examples: [{ shareLink: 'https://files.example.com/s/Q2hhbmdlIG1lIQ#3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }] },
);

export const PatchLinkBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'An empty string removes the password' })),
    expirationDays: Type.Optional(days),
    maxAccess: Type.Optional(accesses),
    canDownload: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ expirationDays: 30, maxAccess: 0 }] },
);

const linkSettings = {
  sharedHash: Type.String(),
  expiresAt: NullableTimestamp,
  maxAccess: Type.Integer(),
  canView: Type.Boolean(),
  canDownload: Type.Boolean(),
  canEdit: Type.Boolean(),
  isPublic: Type.Boolean(),
};

export const CreatedLink = Type.Object(
  { shareLink: Type.String({ description: '`<public URL>/s/<sharedHash>#<linkKey>`' }), ...linkSettings },
  {
    examples: [
      {
        shareLink: 'https://files.example.com/s/Q2hhbmdlIG1lIQ#3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        sharedHash: 'Q2hhbmdlIG1lIQ',
        expiresAt: null,
        maxAccess: 10,
        canView: true,
        canDownload: true,
        canEdit: false,
        isPublic: true,
      },
    ],
  },
);

export const LinkSummary = Type.Object(
  {
    ...linkSettings,
    accessCount: Type.Integer(),
    hasPassword: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        sharedHash: 'Q2hhbmdlIG1lIQ',
        expiresAt: null,
        maxAccess: 10,
        accessCount: 3,
        canView: true,
        canDownload: true,
        canEdit: false,
        isPublic: true,
        hasPassword: true,
        createdAt: '2026-11-23T12:00:00.000Z',
        updatedAt: '2026-11-23T12:00:00.000Z',
      },
    ],
  },
);

export const PublicInfoBody = Type.Object({ password: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: false });

export const PublicDownloadBody = Type.Object(
  {
    encryptionKey: Type.Optional(Type.String({ maxLength: 256, description: 'The link key from the URL fragment (required)' })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    hashName: Type.Optional(Type.String({ maxLength: 64, description: 'For a folder link: which file of the shared tree' })),
  },
  { additionalProperties: false },
);

const keyProof = Type.String({
  maxLength: 64,
  description: 'base64url(HMAC-SHA256(link key, "coffre-link-key-check")): shows the link key without sending it',
});

export const FolderZipBody = Type.Object(
  {
    encryptionKey: Type.String({ maxLength: 256, description: 'The link key from the URL fragment' }),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const FolderOpenBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    encryptionKey: Type.Optional(Type.String({ maxLength: 256, description: 'Optional: checked before the open is counted' })),
    keyProof: Type.Optional(keyProof),
  },
  { additionalProperties: false },
);

export const FolderOpenQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: MAX_PAGE_SIZE, description: 'Files per page' })),
    cursor: Type.Optional(Type.String({ maxLength: 4096, description: '`nextCursor` of the page before' })),
  },
  { additionalProperties: false },
);

export const SealedDownloadBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    hashName: Type.Optional(Type.String({ maxLength: 64 })),
    keyProof: Type.Optional(keyProof),
  },
  { additionalProperties: false },
);

const KeyCheck = Type.Object(
  { id: Type.String(), wrapped: Type.String() },
  {
    description:
      "The first wrap of the key chain: the shared item's key wrapped by the link key, with `id` as associated data (as in `X-Coffre-Key-Chain`). A client unwraps it with the key of its link to learn whether that key is right before downloading, which counts an access; it says nothing without the key.",
  },
);

export const SharedFileInfo = Type.Object(
  {
    name: Type.String(),
    size: Type.Integer(),
    contentType: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    expiresAt: NullableTimestamp,
    maxAccess: Type.Integer(),
    remainingAccess: Type.Union([Type.Integer(), Type.Null()], { description: 'null when unlimited' }),
    canDownload: Type.Boolean(),
    keyCheck: KeyCheck,
  },
  {
    examples: [
      {
        name: 'report.pdf',
        size: 182044,
        contentType: 'application/pdf',
        createdAt: '2026-11-23T12:00:00.000Z',
        updatedAt: '2026-11-23T12:00:00.000Z',
        expiresAt: null,
        maxAccess: 10,
        remainingAccess: 7,
        canDownload: true,
        keyCheck: {
          id: 'lnk_01jd3kq8m7c9x4v2b6n0p5r8st',
          wrapped: 'q2Xb0y7ZbO1bVn3uQ1g8lJ4mXyKk1zv3fN0yWc2aTq9rS5dE6hU8iO0pL3kJ7mN1bV4cX2zA5sD8fG1hJ4kL7zX0cV3bN6m',
        },
      },
    ],
  },
);

export const SharedFolderContent = Type.Object(
  {
    folder: Type.Object({
      id: Type.String(),
      name: Type.String(),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Type.String({ format: 'date-time' }),
    }),
    files: Type.Array(
      Type.Object({
        hashName: Type.String(),
        name: Type.String(),
        size: Type.Integer(),
        contentType: Type.String(),
        createdAt: Type.String({ format: 'date-time' }),
        path: Type.String({ description: 'Folder path inside the shared folder, `/` for its own files' }),
      }),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'The `cursor` of the next page; null on the last' }),
    totalFiles: Type.Integer(),
    totalSizeByte: Type.Integer(),
    totalSizeReadable: Type.String(),
    expiresAt: NullableTimestamp,
    canDownload: Type.Boolean(),
    keyCheck: KeyCheck,
  },
  { description: 'The shared folder, the files of its tree (the first 1,000 by path and name) and its totals' },
);
