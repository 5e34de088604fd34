/**
 * A download through a share link that survives a flaky network: the sealed route's ciphertext,
 * decrypted in the page; when the connection breaks it retries after 1, 2, 4, 8, 15 and 30 s and
 * asks only for the rest (`Range`), with the link's resume pass so the resumed part spends no other
 * access. The pass is kept in sessionStorage: after a reload the page gets the file again with it.
 */
import { ApiError, authHeaders, errorOf, url } from './api';
import { chainFromHeaders, decryptResumable, linkKeyProof, unwrapChain } from './crypto/sealed';

export const RETRY_DELAYS_SECONDS = [1, 2, 4, 8, 15, 30];

/** The file got a new version while it was downloading: what came first cannot be continued. */
export class FileChangedError extends Error {
  constructor() {
    super('The file changed while it was downloading');
    this.name = 'FileChangedError';
  }
}

export interface LinkDownload {
  sharedHash: string;
  linkKey: string;
  password?: string;
  /** A file of a folder link: not counted; the pass of the folder's open gets it past a spent limit. */
  hashName?: string;
  write: (chunk: Uint8Array) => Promise<void> | void;
  onProgress?: (percent: number) => void;
  /** A retry is coming in `seconds`; null once the download moves again. */
  onRetry?: (seconds: number | null) => void;
}

const passKey = (sharedHash: string) => `coffre.pass.${sharedHash}`;

/** The resume pass this tab holds for a link, if any. */
export function storedPass(sharedHash: string): string | null {
  try {
    return sessionStorage.getItem(passKey(sharedHash));
  } catch {
    return null;
  }
}

/** Keeps the pass a link's answer carried, for this tab's later requests on the link. */
export function keepPass(sharedHash: string, pass: string | null): void {
  if (!pass) return;
  try {
    sessionStorage.setItem(passKey(sharedHash), pass);
  } catch {
    // storage refused (private mode): the download still works, a reload just cannot resume
  }
}

/** A network failure (worth a retry), as opposed to an answer of the server or a damaged byte. */
function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError || (error instanceof ApiError && error.status >= 500);
}

const wait = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

export async function downloadThroughLink(d: LinkDownload): Promise<void> {
  const keyProof = await linkKeyProof(d.linkKey);
  const body = JSON.stringify({
    keyProof,
    ...(d.password ? { password: d.password } : {}),
    ...(d.hashName ? { hashName: d.hashName } : {}),
  });
  let etag: string | null = null;

  /** The stored bytes from `offset` on; throws an ApiError for an answer other than the one asked for. */
  const request = async (offset: number): Promise<Response> => {
    const pass = storedPass(d.sharedHash);
    const res = await fetch(url(`/files/download/public/${encodeURIComponent(d.sharedHash)}/sealed`), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...authHeaders(),
        ...(pass ? { 'x-coffre-pass': pass } : {}),
        ...(offset > 0 ? { range: `bytes=${offset}-`, ...(etag ? { 'if-range': etag } : {}) } : {}),
      },
      body,
      cache: 'no-store',
      credentials: 'omit',
    });
    if (!res.ok || !res.body) throw await errorOf(res);
    if (!d.hashName) keepPass(d.sharedHash, res.headers.get('x-coffre-pass'));
    if (offset > 0 && res.status !== 206) {
      // A whole new version came instead of the rest: give it back unread (that returns its access).
      await res.body.cancel();
      throw new FileChangedError();
    }
    return res;
  };

  /** `request`, retried after each delay while the network fails; the last failure is thrown. */
  const withRetries = async (offset: number, failure?: unknown): Promise<Response> => {
    for (const seconds of [...(failure === undefined ? [0] : []), ...RETRY_DELAYS_SECONDS]) {
      if (seconds > 0) {
        d.onRetry?.(seconds);
        await wait(seconds);
      }
      try {
        const res = await request(offset);
        d.onRetry?.(null);
        return res;
      } catch (error) {
        if (!isNetworkError(error)) throw error;
        failure = error;
      }
    }
    throw failure;
  };

  const first = await withRetries(0);
  etag = first.headers.get('etag');
  const total = Number(first.headers.get('content-length')) || 0;
  const { chain, ids } = chainFromHeaders(first.headers);
  let key;
  try {
    key = await unwrapChain(d.linkKey, chain, ids);
  } catch (error) {
    await first.body!.cancel();
    throw error;
  }
  await decryptResumable(
    key,
    first.body!,
    async (offset, error) => {
      if (!isNetworkError(error)) return null;
      return (await withRetries(offset, error)).body;
    },
    d.write,
    (read) => total && d.onProgress?.(Math.floor((read / total) * 100)),
  );
}
