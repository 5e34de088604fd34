import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../errors.js';

/** The tus protocol version this server speaks, and its extensions (https://tus.io/protocols/resumable-upload). */
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,creation-defer-length,termination,expiration,checksum';
export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5'] as const;
export const OFFSET_STREAM = 'application/offset+octet-stream';

/** Every tus request but OPTIONS names the protocol version it speaks: 412 otherwise. */
export function requireTusVersion(headers: IncomingHttpHeaders): void {
  if (headers['tus-resumable'] !== TUS_VERSION)
    throw new AppError('TUS_VERSION_UNSUPPORTED', undefined, undefined, { 'Tus-Version': TUS_VERSION });
}

/** A non-negative decimal integer header (Upload-Length, Upload-Offset); undefined when absent. */
export function integerHeader(headers: IncomingHttpHeaders, name: string): number | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new AppError('UPLOAD_BAD_HEADER', `${name} must be a non-negative integer`);
  return Number(value);
}

/**
 * Upload-Metadata: comma-separated pairs of a key (no space, no comma) and its value in base64,
 * the value optional. Keys are unique; anything else is 400.
 */
export function parseMetadata(header: string | string[] | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  if (header === undefined || header === '') return pairs;
  if (typeof header !== 'string') throw new AppError('UPLOAD_BAD_METADATA');
  for (const pair of header.split(',')) {
    const match = /^\s*([^\s,]+)(?: ([A-Za-z0-9+/]*={0,2}))?\s*$/.exec(pair);
    if (!match || pairs.has(match[1])) throw new AppError('UPLOAD_BAD_METADATA');
    const encoded = match[2] ?? '';
    if (encoded.length % 4 !== 0) throw new AppError('UPLOAD_BAD_METADATA', `The value of ${match[1]} is not base64`);
    const value = Buffer.from(encoded, 'base64').toString('utf8');
    if (value.includes('\uFFFD')) throw new AppError('UPLOAD_BAD_METADATA', `The value of ${match[1]} is not UTF-8`);
    pairs.set(match[1], value);
  }
  return pairs;
}

/** Upload-Checksum: `<algorithm> <base64 digest>` of the request body. */
export function parseChecksum(headers: IncomingHttpHeaders): { algorithm: string; digest: Buffer } | undefined {
  const value = headers['upload-checksum'];
  if (value === undefined) return undefined;
  const match = typeof value === 'string' ? /^(\S+) ([A-Za-z0-9+/]+={0,2})$/.exec(value) : null;
  if (!match) throw new AppError('UPLOAD_BAD_HEADER', 'Upload-Checksum must be "<algorithm> <base64 digest>"');
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(match[1])) throw new AppError('UPLOAD_CHECKSUM_UNSUPPORTED');
  return { algorithm: match[1], digest: Buffer.from(match[2], 'base64') };
}

/** An instant as tus wants it in Upload-Expires (RFC 9110's HTTP date). */
export function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}
