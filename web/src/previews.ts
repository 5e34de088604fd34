/**
 * How the viewer gets content. Signed in: the preview route, fetched with the bearer token (an
 * `<img>` or `<video>` could not carry it) into a Blob. On a link page: the sealed route, decrypted
 * in the page with the key of the URL's fragment, which never leaves it.
 */
import { authHeaders, errorOf, url } from './api';
import { downloadThroughLink } from './link-download';
import { previewType } from './preview-kinds';
import type { Loaded } from './pages/viewer';

export async function loadOwnPreview(fileId: string, signal: AbortSignal): Promise<Loaded> {
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
