import { AppError } from '../errors.js';

const MAX_NAME_BYTES = 255;

/**
 * Returns the problem with an item name, or null when it is acceptable: 1–255 UTF-8 bytes,
 * no `/`, no NUL or other control characters, not `.` or `..` (docs/api.md).
 */
function nameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `must be at most ${MAX_NAME_BYTES} bytes in UTF-8`;
  if (name.includes('/')) return 'must not contain "/"';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  if (name.trim().length === 0) return 'must not be only spaces';
  return null;
}

export function assertName(name: string, field = 'name'): string {
  const problem = nameProblem(name);
  if (problem) throw new AppError('INVALID_NAME', `The name ${problem}`, [{ field, problem }]);
  return name;
}

/**
 * A file name as typed, from the filename of a multipart/form-data part: browsers write a name's
 * `"`, CR and LF as `%22`, `%0D` and `%0A` (the HTML standard's form encoding) and leave every
 * other character, `%` included, as it is. Those three escapes are undone; a name that then holds
 * CR or LF is refused by `assertName` like any other control character.
 */
export function nameFromFormData(filename: string): string {
  return filename.replace(/%(22|0D|0A)/g, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Candidate names for an item whose name is taken: `base (suffix)`, `base (suffix 2)`, … For
 * files the marker goes before the extension (`report (1).pdf`). Only names of at most 255 bytes.
 */
export function* nameVariants(base: string, suffix: string, keepExtension: boolean): Generator<string> {
  const dot = keepExtension ? base.lastIndexOf('.') : -1;
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  for (let n = 1; n < 10_000; n++) {
    const marker = suffix ? (n === 1 ? suffix : `${suffix} ${n}`) : String(n);
    const candidate = `${stem} (${marker})${ext}`;
    if (Buffer.byteLength(candidate, 'utf8') <= MAX_NAME_BYTES) yield candidate;
  }
}
