import { useEffect, useRef, useState } from 'preact/hooks';
import { isThumbnailable } from '../../../src/lib/thumbnail-types';
import { authHeaders } from '../api';
import { Icon } from '../ui';
import type { Item } from './items';

/**
 * An item's picture in the list: the thumbnail of an image (made by the server in the background),
 * else the generic icon. The token travels in a header, which an <img src> cannot send: the
 * thumbnail is fetched, only once its row comes into view, and shown from a blob: address.
 */

// One address per file version seen: scrolling back or coming back to a folder does not fetch
// again. Keyed by the current version's id (updatedAt where a list gives none).
const made = new Map<string, string>();

function mayHaveThumbnail(item: Item): boolean {
  return item.kind === 'file' && isThumbnailable(String(item.raw?.contentType ?? ''), item.name);
}

/** The thumbnail's address: with the version, the browser's cache keeps it a year, and a new version has a new one. */
function addressOf(item: Item): string {
  const version = item.raw?.currentVersionId;
  return `/api/files/thumbnail/${item.id}${version ? `?v=${encodeURIComponent(version)}` : ''}`;
}

/**
 * How long to wait before asking again for a thumbnail the server is still making (just uploaded):
 * soon at first, then less often, then no more (the icon stays until the folder is opened again).
 */
const PENDING_RETRY_MS = [1_500, 3_000, 6_000, 12_000, 24_000];

/** The thumbnail as a blob: address; `pending` while the server is making it; null when there is none. */
async function fetchPicture(item: Item): Promise<string | null | 'pending'> {
  try {
    const res = await fetch(addressOf(item), { headers: authHeaders() });
    if (res.ok) return URL.createObjectURL(await res.blob());
    const body = await res.json().catch(() => null);
    return body?.code === 'THUMBNAIL_PENDING' ? 'pending' : null;
  } catch {
    return null;
  }
}

export function ItemPicture(props: { item: Item }) {
  const { item } = props;
  const key = `${item.id}@${item.raw?.currentVersionId ?? item.date}`;
  const [url, setUrl] = useState<string | null | undefined>(made.get(key));
  // The times this version's thumbnail was found still being made.
  const [pending, setPending] = useState({ key, times: 0 });
  const times = pending.key === key ? pending.times : 0;
  const ref = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (url !== undefined || !mayHaveThumbnail(item) || !ref.current) return;
    let cancelled = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      void fetchPicture(item).then((address) => {
        if (cancelled) return;
        if (address !== 'pending') {
          // Not kept when missing: one given up on while still being made is asked for again next time.
          if (address) made.set(key, address);
          setUrl(address);
        } else if (times < PENDING_RETRY_MS.length) {
          retry = setTimeout(() => setPending({ key, times: times + 1 }), PENDING_RETRY_MS[times]);
        } else {
          setUrl(null);
        }
      });
    });
    observer.observe(ref.current);
    return () => {
      cancelled = true;
      observer.disconnect();
      clearTimeout(retry);
    };
  }, [key, url, times]);
  return (
    <span ref={ref} class="item-picture">
      {url ? <img class="thumbnail" src={url} alt="" loading="lazy" decoding="async" /> : <Icon name={item.kind} />}
    </span>
  );
}
