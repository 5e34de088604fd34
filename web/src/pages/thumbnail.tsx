import { useEffect, useRef, useState } from 'preact/hooks';
import { authHeaders } from '../api';
import { Icon } from '../ui';
import type { Item } from './items';

/**
 * An item's picture in the list: the thumbnail of an image (made by the server in the background),
 * else the generic icon. The token travels in a header, which an <img src> cannot send: the
 * thumbnail is fetched, only once its row comes into view, and shown from a blob: address.
 */

const IMAGE = /^image\/(jpeg|png|webp|gif|avif|tiff)\b/i;

// One address per file version seen (updatedAt changes with a new version): scrolling back or
// coming back to a folder does not fetch again. `null`: the server has none (yet).
const made = new Map<string, string | null>();

function mayHaveThumbnail(item: Item): boolean {
  return item.kind === 'file' && IMAGE.test(String(item.raw?.contentType ?? ''));
}

export function ItemPicture(props: { item: Item }) {
  const { item } = props;
  const key = `${item.id}@${item.date}`;
  const [url, setUrl] = useState<string | null | undefined>(made.get(key));
  const ref = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (url !== undefined || !mayHaveThumbnail(item) || !ref.current) return;
    let cancelled = false;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      void fetch(`/api/files/thumbnail/${item.id}`, { headers: authHeaders() })
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
