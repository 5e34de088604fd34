import { AppError } from '../../errors.js';

// 3–63 characters of a-z 0-9 . -, starting and ending with a letter or digit (docs/api.md).
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export const BUCKET_NAME_RULE = '3–63 characters of a-z, 0-9, "." and "-", starting and ending with a letter or digit';

/** Throws 400 INVALID_NAME unless `name` follows the bucket name rule. */
export function assertBucketName(name: string, field = 'name'): string {
  if (!BUCKET_NAME.test(name)) {
    throw new AppError('INVALID_NAME', `A bucket name has ${BUCKET_NAME_RULE}`, [{ field, problem: `must have ${BUCKET_NAME_RULE}` }]);
  }
  return name;
}

/** `base`, then `base-2`, `base-3`, …: the first one not in `taken`. */
export function firstFreeBucketName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
