import type { Readable } from 'node:stream';
import type { ByteRange } from '../../blobs/blob-store.js';
import type { Principal } from '../../context.js';

export type LinkKind = 'file' | 'folder';

/** What the sealed route sends: stored bytes (all, or `range` of `storedSize`) and the key chain. */
export interface SealedDownload {
  body: Readable;
  length: number;
  storedSize: number;
  range?: ByteRange;
  etag: string;
  name: string;
  keyIds: string[];
  keyChain: string[];
}

export interface LinkSettings {
  password?: string;
  expirationDays?: number;
  maxAccess?: number;
  canView?: boolean;
  canDownload?: boolean;
  canEdit?: boolean;
  isPublic?: boolean;
}

/** Who is asking on a public route: the secrets they sent, their address, and their token if any. */
export interface Visitor {
  password?: string;
  encryptionKey?: string;
  /** The link's key proof (links.key-proof.ts), from a client that keeps the key to itself. */
  keyProof?: string;
  hashName?: string;
  /** The resume pass of an earlier download (`x-coffre-pass`). */
  pass?: string;
  address: string;
  principal: Principal | null;
}
