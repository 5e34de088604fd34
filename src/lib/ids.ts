import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

/** Type prefixes of every id the service hands out (docs/api.md). */
export type IdPrefix = 'usr' | 'dhb' | 'bkt' | 'fld' | 'fil' | 'ver' | 'lnk' | 'tok' | 'prm' | 'upl' | 'inv';

// Crockford base32 in lower case: no i, l, o, u, so ids read and dictate well.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY_LENGTH = 26;

const TIME_CHARS = 10;
/** The last id's milliseconds and random part (one base-32 digit per entry), for `newId`'s ordering. */
let lastTime = -1;
const lastRandom = new Array<number>(BODY_LENGTH - TIME_CHARS).fill(0);

/**
 * A new id `<prefix>_<26 chars>`: 48 bits of milliseconds then 80 random bits (the ULID layout),
 * so ids sort by creation time, which keeps B-tree inserts local. Within one process they also
 * sort in the order they were made (ULID's monotonic mode): an id made in the same millisecond as
 * the one before takes that one's random part plus one. Listings that put the newest first by id
 * (file versions) would otherwise order two versions made in the same millisecond at random.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    const random = randomBytes(lastRandom.length);
    for (let i = 0; i < lastRandom.length; i++) lastRandom[i] = random[i] % 32;
  } else {
    // Same millisecond (or the clock stepped back): the next random part, carrying into the time.
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0;
    if (i >= 0) lastRandom[i]++;
    else lastTime++;
  }
  const chars: string[] = new Array(BODY_LENGTH);
  let time = lastTime;
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    chars[i] = ALPHABET[time % 32];
    time = Math.floor(time / 32);
  }
  for (let i = 0; i < lastRandom.length; i++) chars[TIME_CHARS + i] = ALPHABET[lastRandom[i]];
  return `${prefix}_${chars.join('')}`;
}

/** The part every id pattern shares, to recognise id patterns in validation errors. */
export const ID_BODY = `[${ALPHABET}]{${BODY_LENGTH}}`;

/** JSON-schema pattern of a well-formed id of one type. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${ID_BODY}$`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(idPattern(prefix)).test(value);
}

/** Throws 400 INVALID_ID unless `value` is a well-formed id of the given type. */
export function assertId(prefix: IdPrefix, value: string, field = 'id'): string {
  if (!isId(prefix, value)) {
    throw new AppError('INVALID_ID', `${field} is not a valid ${prefix}_ id`, [{ field, problem: 'malformed id' }]);
  }
  return value;
}

/** A URL-safe random string of `bytes` bytes (base64url); 16 bytes = 128 bits. */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}
