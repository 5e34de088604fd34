/**
 * How the viewer gets content. Signed in: the preview route, fetched with the bearer token (an
 * `<img>` could not carry it) into a Blob; audio and video instead play from a preview address,
 * the route with a ticket standing for the token, so that the player streams and seeks with
 * ranges. On a link page: the sealed route, decrypted in the page with the key of the URL's
 * fragment, which never leaves it.
 */
import { authHeaders, call, errorOf, url } from './api';
import { downloadThroughLink } from './link-download';
import { previewKind, previewType } from './preview-kinds';
import type { Loaded } from './pages/viewer';

export async function loadOwnPreview(file: { key: string; name: string }, signal: AbortSignal): Promise<Loaded> {
  const fileId = file.key;
  const kind = previewKind(file.name);
  if (kind === 'audio' || kind === 'video') {
    const address = await call<{ url: string }>('GET', `/files/preview-address/${fileId}`, { signal });
    return { address: address.url, truncated: false };
  }
  const res = await fetch(url(`/files/preview/${fileId}`), { headers: authHeaders(), cache: 'no-store', credentials: 'omit', signal });
  if (!res.ok) throw await errorOf(res);
  return { blob: await res.blob(), truncated: res.headers.get('x-coffre-truncated') === 'true' };
}

/** A file of a link (its own, or one of a folder link's by `hashName`), decrypted in this page. */
export async function loadLinkPreview(link: {
  sharedHash: string;
  linkKey: string;
  password?: string;
  hashName?: string;
  name: string;
}): Promise<Loaded> {
  const chunks: Uint8Array[] = [];
  await downloadThroughLink({
    sharedHash: link.sharedHash,
    linkKey: link.linkKey,
    password: link.password,
    hashName: link.hashName,
    write: (chunk) => {
      chunks.push(chunk.slice());
    },
  });
  // The type comes from the allow-list: a blob typed so is shown as what the viewer expects.
  return { blob: new Blob(chunks as BlobPart[], { type: previewType(link.name) ?? 'application/octet-stream' }), truncated: false };
}
