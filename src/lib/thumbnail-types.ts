/**
 * Which files get a thumbnail: images of the types sharp decodes itself (no external program).
 * A file stored with a generic type (a raw or WebDAV PUT without one, an S3-style default) is
 * judged by its name's extension instead; sharp still checks the real format, and a file that is
 * not what its name says just fails and keeps the generic icon. It stays without imports, so that
 * the web app's bundle and migrations may use the same rule.
 */

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/tiff']);

const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  jfif: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
  tif: 'image/tiff',
  tiff: 'image/tiff',
};

/** Types that say nothing about the content: what uploads without a usable type are stored as. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary', 'application/unknown']);

function essence(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/** Whether a file of this stored type and name gets a thumbnail. */
export function isThumbnailable(contentType: string, name: string): boolean {
  const type = essence(contentType);
  if (IMAGE_TYPES.has(type)) return true;
  if (!GENERIC_TYPES.has(type)) return false;
  const dot = name.lastIndexOf('.');
  return dot > 0 && IMAGE_TYPES.has(BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? '');
}
