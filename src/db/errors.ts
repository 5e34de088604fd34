/** True when a write failed on a unique index (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === '23505';
}
