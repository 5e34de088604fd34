import { randomBytes } from 'node:crypto';

/**
 * How long blobs made one after the other share their key's first four characters, which the fs
 * store turns into its two directory levels (`ab/cd/`). Random prefixes made almost every blob
 * create a directory (a mkdir and an fsync of its parent) until tens of thousands of blobs
 * existed, and spread concurrent uploads over as many directories, each needing an fsync of its
 * own; blobs of the same few seconds now land in one directory, whose fsyncs they share. At
 * 1,000 uploads a second that is 10,000 entries a directory; the prefix wraps after 5 years.
 */
const PREFIX_PERIOD_MS = 10_000;
const PREFIX_BITS = 24;

/**
 * A new blob key (24 base64url characters): four characters from the time it is made (see
 * PREFIX_PERIOD_MS), then 120 random bits. Never derived from names or content.
 */
export function newBlobKey(now = Date.now()): string {
  const period = Math.floor(now / PREFIX_PERIOD_MS) % 2 ** PREFIX_BITS;
  const prefix = Buffer.from([period >>> 16, (period >>> 8) & 0xff, period & 0xff]).toString('base64url');
  return prefix + randomBytes(15).toString('base64url');
}
