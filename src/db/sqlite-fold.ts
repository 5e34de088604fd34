import type SQLite from 'better-sqlite3';

/**
 * A name as search compares it on SQLite, folded as the FTS5 `trigram remove_diacritics 1` index
 * folds it: accents dropped from Latin letters only, then lower case. A search that reads rows one
 * by one (search.strategy.ts) must find exactly what the index finds.
 */
export function foldName(text: string): string {
  return text
    .normalize('NFD')
    .replace(/([A-Za-z\u00c0-\u024f\u1e00-\u1eff])\p{Mn}+/gu, '$1')
    .normalize('NFC')
    .toLowerCase();
}

/** `coffre_fold(text)` in SQL, as PostgreSQL has it (migration 019). */
export function registerFold(database: SQLite.Database): void {
  database.function('coffre_fold', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? foldName(text) : null));
}
