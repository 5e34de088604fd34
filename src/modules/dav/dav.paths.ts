import { AppError } from '../../errors.js';

/** Where the WebDAV tree is mounted. */
export const DAV_PREFIX = '/dav';
/** The collection under which items others shared with the caller appear (bucket names, `[a-z0-9.-]`, cannot clash with it). */
export const SHARED_COLLECTION = 'Shared with me';

/** A path below /dav/, as decoded segments: [] is /dav/ itself. */
export type DavPath = readonly string[];

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The decoded segments of a raw request path (its query left out). Each segment is decoded on its
 * own, so an encoded `/` (`%2F`) cannot split one name in two; `.` and `..` (raw or encoded), NUL and
 * control characters are refused rather than resolved: a client never meant them as names.
 */
export function davPathOf(rawPath: string): DavPath {
  const path = rawPath.split('?')[0];
  if (path !== DAV_PREFIX && !path.startsWith(`${DAV_PREFIX}/`)) throw new AppError('DAV_OTHER_SERVER');
  if (path.includes('#')) throw new AppError('DAV_BAD_PATH');
  return path
    .slice(DAV_PREFIX.length)
    .split('/')
    .filter((raw) => raw !== '')
    .map(decodeSegment);
}

function decodeSegment(raw: string): string {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw new AppError('DAV_BAD_PATH', 'The path holds a malformed percent-encoding');
  }
  if (name === '.' || name === '..' || name.includes('/') || name.includes('\\') || CONTROL.test(name)) throw new AppError('DAV_BAD_PATH');
  return name;
}

/** The href of a path: every segment percent-encoded, collections ending in `/`. */
export function hrefOf(path: DavPath, collection: boolean): string {
  const encoded = path.map((segment) => encodeURIComponent(segment)).join('/');
  if (path.length === 0) return `${DAV_PREFIX}/`;
  return `${DAV_PREFIX}/${encoded}${collection ? '/' : ''}`;
}

/** Whether `inner` is `outer` or lies below it. */
export function isWithin(inner: DavPath, outer: DavPath): boolean {
  return outer.length <= inner.length && outer.every((segment, i) => inner[i] === segment);
}

/**
 * The path a Destination header names (RFC 4918 §10.3): an absolute URI on this server, or an
 * absolute path. Another host, or a path outside /dav/, is 502 (§9.8.5); an unparsable value 400.
 */
export function destinationPath(header: string | undefined, requestHost: string, requestProtocol: string): DavPath {
  if (!header) throw new AppError('DAV_BAD_HEADER', 'COPY and MOVE need a Destination header');
  let url: URL;
  let base: URL;
  try {
    base = new URL(`${requestProtocol}://${requestHost}`);
    url = new URL(header, base);
  } catch {
    throw new AppError('DAV_BAD_HEADER', 'The Destination header is not a URI');
  }
  // Both as URL normalizes them: `Host: example.com:80` and `http://example.com/` are the same server.
  if (url.host !== base.host) throw new AppError('DAV_OTHER_SERVER');
  // URL normalizes `..` away; a client that sent one meant no name of ours.
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(header.replace(/^[a-z]+:\/\/[^/]*/i, ''))) throw new AppError('DAV_BAD_PATH');
  return davPathOf(url.pathname);
}
