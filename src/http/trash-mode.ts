import { AppError } from '../errors.js';

/** `trash` from the body or the query string (the API contract allows both). */
export function trashMode(body: unknown, query: { trash?: string }): 'soft' | 'hard' {
  const fromBody = body && typeof body === 'object' ? (body as { trash?: unknown }).trash : undefined;
  if (fromBody !== undefined && typeof fromBody !== 'string') throw new AppError('INVALID_TRASH_MODE');
  if (fromBody !== undefined && query.trash !== undefined && fromBody !== query.trash) {
    throw new AppError('INVALID_TRASH_MODE', 'trash is given twice with different values');
  }
  const mode = fromBody ?? query.trash ?? 'soft';
  if (mode !== 'soft' && mode !== 'hard') throw new AppError('INVALID_TRASH_MODE', `trash must be "soft" or "hard", got "${mode}"`);
  return mode;
}
