import type { FolderRow } from '../../db/schema.js';

/**
 * Folders recently uploaded into by their owner, with their unwrapped keys. Before it reads a
 * body, an upload checks its folder and unwraps the folder's key from the master key through the
 * chain of ancestors: one statement, a round trip of its own over PostgreSQL, for each of the many
 * small files a sync client sends into the same folder. What is kept cannot go wrong where it
 * matters: a folder's key never changes (a move re-wraps it, the key stays) and neither does its
 * owner, and the transaction that records an upload loads the folder again under the owner's lock
 * and refuses it there if the folder was trashed, deleted or moved meanwhile. A kept entry can
 * only let an upload read its body before being refused, so entries are also read again after
 * `MAX_AGE_MS`, and forgotten when a recording fails.
 */
export interface UploadTarget {
  folder: FolderRow;
  /** The folder's key, unwrapped. */
  key: Buffer;
}

const MAX_ENTRIES = 10_000;
const MAX_AGE_MS = 60_000;

export class UploadTargets {
  private readonly entries = new Map<string, { target: UploadTarget; keptAt: number }>();

  /** The kept target of `folderId` if it is `ownerId`'s and fresh enough. */
  get(folderId: string, ownerId: string): UploadTarget | undefined {
    const entry = this.entries.get(folderId);
    if (!entry) return undefined;
    if (Date.now() - entry.keptAt >= MAX_AGE_MS) {
      this.entries.delete(folderId);
      return undefined;
    }
    return entry.target.folder.owner_id === ownerId ? entry.target : undefined;
  }

  keep(target: UploadTarget): void {
    const id = target.folder.id;
    this.entries.delete(id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, { target, keptAt: Date.now() });
  }

  forget(folderId: string): void {
    this.entries.delete(folderId);
  }
}
