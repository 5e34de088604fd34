/**
 * Pages of subfolders as the database wrote them, kept by parent, the parent's
 * `listing_version` and the page asked for. The version is read with the parent row, which a
 * listing loads anyway (to check access and for its `total`), and triggers bump it whenever a
 * child folder appears, goes or changes a listed field (migration 007), on any instance. So a page
 * kept under the version just read is the page the database would give now, and answering from
 * memory skips the one statement that costs more than the rest of the request: a hundred rows
 * turned into JSON. A page read while a child changed may be kept under the version read before
 * the change: only a request that read that older version can get it, and it shows the newer data.
 * Memory stays bounded: the least recently used pages go first beyond `MAX_BYTES`.
 */
export interface ListedPage {
  /** The items as JSON objects (see listItemJson), comma-separated, in UTF-8. */
  items: Buffer;
  nextCursor: string | null;
}

const MAX_BYTES = 8 * 1024 * 1024;

export interface ListingKey {
  parentId: string;
  version: number;
  trashBatch: string;
  limit: number;
  cursor: string | undefined;
}

export class ListingCache {
  private readonly pages = new Map<string, { page: ListedPage; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = MAX_BYTES) {}

  get(key: ListingKey): ListedPage | undefined {
    const id = keyOf(key);
    const entry = this.pages.get(id);
    if (!entry) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.pages.delete(id);
    this.pages.set(id, entry);
    return entry.page;
  }

  set(key: ListingKey, page: ListedPage): void {
    const id = keyOf(key);
    const bytes = page.items.length + 256;
    if (bytes > this.maxBytes) return;
    const previous = this.pages.get(id);
    if (previous) {
      this.bytes -= previous.bytes;
      this.pages.delete(id);
    }
    while (this.bytes + bytes > this.maxBytes) {
      const [oldest, entry] = this.pages.entries().next().value as [string, { bytes: number }];
      this.pages.delete(oldest);
      this.bytes -= entry.bytes;
    }
    this.pages.set(id, { page, bytes });
    this.bytes += bytes;
  }

  get size(): number {
    return this.pages.size;
  }
}

function keyOf(key: ListingKey): string {
  return `${key.parentId}\n${key.version}\n${key.trashBatch}\n${key.limit}\n${key.cursor ?? ''}`;
}
