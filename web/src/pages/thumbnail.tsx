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

export function ItemPicture(props: { item: Item }) {
  const { item } = props;
  const key = `${item.id}@${item.raw?.currentVersionId ?? item.date}`;
  const [url, setUrl] = useState<string | null | undefined>(made.get(key));
  const ref = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (url !== undefined || !mayHaveThumbnail(item) || !ref.current) return;
    let cancelled = false;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      void fetch(addressOf(item), { headers: authHeaders() })
        .then(async (res) => (res.ok ? URL.createObjectURL(await res.blob()) : null))
        .catch(() => null)
        .then((address) => {
          // Not kept when missing: the server may make it while the page is open.
          if (address) made.set(key, address);
          if (!cancelled) setUrl(address);
        });
    });
    observer.observe(ref.current);
    return () => {
      cancelled = true;
      observer.disconnect();
    };
  }, [key, url]);
  return (
    <span ref={ref} class="item-picture">
      {url ? <img class="thumbnail" src={url} alt="" loading="lazy" decoding="async" /> : <Icon name={item.kind} />}
    </span>
  );
}
