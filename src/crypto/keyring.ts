import { hkdfSync } from 'node:crypto';
import { KeyUnwrapError, newKey, unwrapKey, wrapKey } from './key-wrap.js';

/** A key and its wrapped form, as stored on its row. */
export interface WrappedKey {
  key: Buffer;
  wrapped: string;
}

/**
 * The instance's entry into the key hierarchy: master → bucket → folder → file → data key
 * (docs/architecture.md). Holds only the master key; every other key is unwrapped on demand from the
 * rows that store it, wrapped by the key one level up, with the row's id as associated data.
 */
export class Keyring {
  constructor(private readonly masterKey: Buffer) {}

  /**
   * A key of its own for one purpose (`preview tickets`), derived from the master key (HKDF):
   * every instance sharing the master key derives the same one, and nothing it seals opens as
   * anything else.
   */
  purposeKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.masterKey, Buffer.alloc(0), `coffre ${purpose}`, 32));
  }

  newBucketKey(bucketId: string): WrappedKey {
    const key = newKey();
    return { key, wrapped: wrapKey(this.masterKey, key, bucketId) };
  }

  bucketKey(bucketId: string, wrapped: string): Buffer {
    return unwrapKey(this.masterKey, wrapped, bucketId);
  }

  /** Re-wraps a bucket key under a new master key (key rotation touches only bucket rows). */
  rewrapBucketKey(bucketId: string, wrapped: string, newMaster: Buffer): string {
    return wrapKey(newMaster, this.bucketKey(bucketId, wrapped), bucketId);
  }
}

/** A new key for the item `id`, wrapped by `parentKey` (the key one level up). */
export function newChildKey(parentKey: Buffer, id: string): WrappedKey {
  const key = newKey();
  return { key, wrapped: wrapKey(parentKey, key, id) };
}

export function openChildKey(parentKey: Buffer, wrapped: string, id: string): Buffer {
  return unwrapKey(parentKey, wrapped, id);
}

export function rewrapChildKey(key: Buffer, newParentKey: Buffer, id: string): string {
  return wrapKey(newParentKey, key, id);
}

export { KeyUnwrapError };
