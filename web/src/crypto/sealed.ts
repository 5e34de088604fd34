/**
 * Decrypts, in the browser, what `POST /api/files/download/public/{sharedHash}/sealed` returns: the
 * stored ciphertext and the chain of wrapped keys from the link key (the URL fragment, which never
 * leaves the page) down to the blob's data key. Plain WebCrypto, so it runs in browsers and in Node.
 *
 * Wrapped key (src/crypto/key-wrap.ts): base64url(nonce 12 | encrypted key 32 | tag 16), AES-256-GCM
 * under the key one level up, the wrapped key's id as associated data.
 *
 * Stream (docs/storage-format.md): header "CFRS" | version 1 | log2(segment size) | 3 zero
 * bytes | nonce prefix (7), then segments of `segment size` plaintext bytes + 16-byte tag, the last
 * one possibly shorter (an empty stream still has one). Segment i: AES-256-GCM, nonce = prefix |
 * uint32be(i) | final flag (1 on the last segment, else 0), associated data = the 16-byte header.
 */

export const HEADER_BYTES = 16;
export const TAG_BYTES = 16;
const MAGIC = [0x43, 0x46, 0x52, 0x53]; // "CFRS"
const FORMAT_VERSION = 1;

/** The link key does not open the chain: a wrong or damaged key in the URL. */
export class WrongKeyError extends Error {
  constructor() {
    super('The key in the link does not open this file');
    this.name = 'WrongKeyError';
  }
}

/** The ciphertext does not authenticate: damaged, truncated or extended. */
export class DamagedContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DamagedContentError';
  }
}

type Subtle = typeof globalThis.crypto.subtle;
/** A WebCrypto key (named so that both the DOM and the Node type libraries accept it). */
export type WebKey = Awaited<ReturnType<Subtle['importKey']>>;
type Bytes = Uint8Array<ArrayBuffer>;

function subtle(): Subtle {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('WebCrypto is not available (the page must be served over HTTPS or from localhost)');
  return s;
}

export function base64urlDecode(text: string): Bytes {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A link key has the form of 32 bytes in base64url (43 characters). */
export function isLinkKeyForm(key: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(key);
}

async function aesKey(raw: Bytes): Promise<WebKey> {
  return subtle().importKey('raw', raw, { name: 'AES-GCM' }, false, ['decrypt']);
}

/** Unwraps the chain, outermost first, starting from the link key; returns the data key. */
export async function unwrapChain(linkKey: string, chain: string[], ids: string[]): Promise<WebKey> {
  if (!isLinkKeyForm(linkKey) || chain.length === 0 || chain.length !== ids.length) throw new WrongKeyError();
  let raw = base64urlDecode(linkKey);
  for (let i = 0; i < chain.length; i++) {
    const wrapped = base64urlDecode(chain[i]);
    if (wrapped.length !== 12 + 32 + 16) throw new WrongKeyError();
    try {
      const plain = await subtle().decrypt(
        { name: 'AES-GCM', iv: wrapped.subarray(0, 12), additionalData: new TextEncoder().encode(ids[i]), tagLength: 128 },
        await aesKey(raw),
        wrapped.subarray(12),
      );
      raw = new Uint8Array(plain);
    } catch {
      throw new WrongKeyError();
    }
  }
  return aesKey(raw);
}

/** The chain as the sealed route sends it, in its two headers. */
export function chainFromHeaders(headers: Headers): { chain: string[]; ids: string[] } {
  const chain = (headers.get('x-coffre-key-chain') ?? '').split(',').filter(Boolean);
  const ids = (headers.get('x-coffre-key-ids') ?? '').split(',').filter(Boolean);
  return { chain, ids };
}

/**
 * Stored bytes in, authenticated plaintext out, one segment at a time: memory holds at most about
 * two segments whatever the size of the file. A segment is opened only once a following byte shows
 * it is not the final one; `end` opens the final one with the final flag set.
 */
export class SegmentDecryptor {
  private buffer: Bytes = new Uint8Array(0);
  private header: Bytes | null = null;
  private segmentSize = 0;
  private index = 0;
  private ended = false;

  constructor(private readonly key: WebKey) {}

  /** Adds stored bytes; returns the plaintext of the segments now known not to be the last. */
  async push(chunk: Uint8Array): Promise<Uint8Array[]> {
    this.append(chunk);
    const out: Uint8Array[] = [];
    if (!this.header) {
      if (this.buffer.length < HEADER_BYTES) return out;
      this.parseHeader(this.buffer.subarray(0, HEADER_BYTES));
      this.buffer = this.buffer.slice(HEADER_BYTES);
    }
    const sealed = this.segmentSize + TAG_BYTES;
    let at = 0;
    while (this.buffer.length - at > sealed) {
      out.push(await this.open(this.buffer.subarray(at, at + sealed), false));
      at += sealed;
    }
    if (at > 0) this.buffer = this.buffer.slice(at);
    return out;
  }

  /** The last segment; throws when the stream stops short or runs long. */
  async end(): Promise<Uint8Array[]> {
    if (this.ended) return [];
    this.ended = true;
    if (!this.header) throw new DamagedContentError('The file is truncated (no header)');
    if (this.buffer.length < TAG_BYTES || this.buffer.length > this.segmentSize + TAG_BYTES)
      throw new DamagedContentError('The file is truncated');
    const last = await this.open(this.buffer, true);
    this.buffer = new Uint8Array(0);
    return [last];
  }

  private append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.buffer.length === 0) {
      this.buffer = new Uint8Array(chunk);
      return;
    }
    const next = new Uint8Array(this.buffer.length + chunk.length);
    next.set(this.buffer, 0);
    next.set(chunk, this.buffer.length);
    this.buffer = next;
  }

  private parseHeader(h: Bytes): void {
    if (MAGIC.some((b, i) => h[i] !== b)) throw new DamagedContentError('Not a Coffre encrypted stream');
    if (h[4] !== FORMAT_VERSION) throw new DamagedContentError(`Unsupported format version ${h[4]}`);
    const log2 = h[5];
    if (log2 < 10 || log2 > 24 || h[6] !== 0 || h[7] !== 0 || h[8] !== 0) throw new DamagedContentError('Invalid stream header');
    this.header = h.slice();
    this.segmentSize = 2 ** log2;
  }

  private async open(sealed: Bytes, final: boolean): Promise<Uint8Array> {
    const nonce = new Uint8Array(12);
    nonce.set(this.header!.subarray(9, 16), 0);
    new DataView(nonce.buffer).setUint32(7, this.index, false);
    nonce[11] = final ? 1 : 0;
    try {
      const plain = await subtle().decrypt({ name: 'AES-GCM', iv: nonce, additionalData: this.header!, tagLength: 128 }, this.key, sealed);
      this.index++;
      return new Uint8Array(plain);
    } catch {
      throw new DamagedContentError(`Segment ${this.index} does not authenticate`);
    }
  }
}

/**
 * Reads `body` to the end, decrypting as it goes, and hands each plaintext chunk to `write` in
 * order (awaited, so a slow disk slows the download instead of filling memory).
 */
export async function decryptStream(
  body: ReadableStream<Uint8Array>,
  key: WebKey,
  write: (chunk: Uint8Array) => Promise<void> | void,
  onProgress?: (storedBytesRead: number) => void,
): Promise<void> {
  const decryptor = new SegmentDecryptor(key);
  const reader = body.getReader();
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.length;
      for (const plain of await decryptor.push(value)) await write(plain);
      onProgress?.(read);
    }
    for (const plain of await decryptor.end()) await write(plain);
  } finally {
    reader.releaseLock();
  }
}

/**
 * Decrypts a download that may reach the page in several responses: reads `first`, and when the
 * network breaks it off, asks `reopen` for the stored bytes from where it stopped (a `Range`
 * request) and carries on with the same decryptor, so nothing already written is read twice.
 * `reopen` resolves to null to give up (the network error is thrown); a damaged byte is never retried.
 */
export async function decryptResumable(
  key: WebKey,
  first: ReadableStream<Uint8Array>,
  reopen: (offset: number, error: unknown) => Promise<ReadableStream<Uint8Array> | null>,
  write: (chunk: Uint8Array) => Promise<void> | void,
  onProgress?: (storedBytesRead: number) => void,
): Promise<void> {
  const decryptor = new SegmentDecryptor(key);
  let body: ReadableStream<Uint8Array> | null = first;
  let offset = 0;
  while (body) {
    const reader = body.getReader();
    try {
      for (;;) {
        const read = await reader.read().then(
          (result) => ({ result, broke: undefined }),
          (error: unknown) => ({ result: undefined, broke: error }),
        );
        if (!read.result) {
          // The network broke off: ask for the rest from here.
          body = await reopen(offset, read.broke);
          if (!body) throw read.broke;
          break;
        }
        if (read.result.done) {
          body = null;
          break;
        }
        offset += read.result.value.length;
        for (const plain of await decryptor.push(read.result.value)) await write(plain);
        onProgress?.(offset);
      }
    } catch (error) {
      await reader.cancel().catch(() => {});
      throw error;
    } finally {
      reader.releaseLock();
    }
  }
  for (const plain of await decryptor.end()) await write(plain);
}

/**
 * The link's key proof, base64url(HMAC-SHA256(link key, "coffre-link-key-check")): it shows the
 * server the page holds the key (checked before an access is counted) without sending the key.
 */
export async function linkKeyProof(linkKey: string): Promise<string> {
  const raw = base64urlDecode(linkKey);
  const hmac = await subtle().importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle().sign('HMAC', hmac, new TextEncoder().encode('coffre-link-key-check')));
  let bin = '';
  for (const b of mac) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
