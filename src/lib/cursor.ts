import { AppError } from '../errors.js';

/** Opaque keyset-pagination cursors: the sort key of the last item of a page, base64url JSON. */
export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const values: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(values) &&
      values.length === arity &&
      values.every(
        (v) => (typeof v === 'string' && v.length <= 1024 && !v.includes('\u0000')) || (typeof v === 'number' && Number.isFinite(v)),
      )
    ) {
      return values;
    }
  } catch {
    // fall through to the error below
  }
  throw new AppError('INVALID_CURSOR', undefined, [{ field: 'cursor', problem: 'not a cursor from a previous page' }]);
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
