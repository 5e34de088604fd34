import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import { PageQuery } from '../folders/folders.schemas.js';

/** The shortest text searched: a trigram index cannot answer less. */
export const MIN_QUERY_LENGTH = 3;

/** What `type` may ask for: a kind, or files of a family of content types. */
export const SEARCH_TYPES = ['file', 'folder', 'image', 'pdf', 'text', 'audio', 'video'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const SearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 255,
    description: `Text the name contains (prefix or anywhere), case and accents aside; at least ${MIN_QUERY_LENGTH} characters`,
    examples: ['café'],
  }),
  type: Type.Optional(
    Type.Union(
      SEARCH_TYPES.map((t) => Type.Literal(t)),
      { description: '`file` or `folder`, or files of a content-type family: `image`, `pdf`, `text`, `audio`, `video`' },
    ),
  ),
  modifiedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Items modified at or after this time' })),
  modifiedBefore: Type.Optional(Type.String({ format: 'date-time', description: 'Items modified before this time' })),
  ...PageQuery,
});
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchResult = Type.Object({
  kind: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
  id: Type.String(),
  name: Type.String(),
  path: Type.String({
    description: 'The folder holding the item, from the bucket root (`/Projects/2026`) or, shared, from the highest folder shared with you',
  }),
  folderId: Type.String({ description: 'The folder holding the item; "" when it is not yours to see (an item shared on its own)' }),
  bucketId: Type.String(),
  size: Type.Union([Type.Integer(), Type.Null()], { description: 'Files: bytes of the current version' }),
  contentType: Type.Union([Type.String(), Type.Null()], { description: 'Files only' }),
  updatedAt: Timestamp,
  owner: Type.Union([Type.Object({ userId: Type.String(), name: Type.String() }), Type.Null()], {
    description: 'null for your own item; who shared it with you otherwise',
  }),
});
export type SearchResult = Static<typeof SearchResult>;

export const SearchPage = Type.Object({
  data: Type.Array(SearchResult),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
