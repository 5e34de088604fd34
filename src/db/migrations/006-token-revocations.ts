import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** The channel a PostgreSQL trigger announces a deleted or altered token on (payload: its id). */
export const TOKEN_REVOKED_CHANNEL = 'coffre_token_revoked';

// Instances over PostgreSQL keep the tokens they resolved in memory (tokens.cache.ts). Whatever
// deletes or alters a token (a sign-out on another instance, an account deleted with its tokens,
// an administrator's SQL) announces it from the database itself, on commit, so no code path can
// forget to. SQLite needs nothing stored: its server is one process, which announces the writes
// of its own connection with temporary triggers (`sqliteTokenTriggers`, see listenSqlite).
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function coffre_token_revoked() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(TOKEN_REVOKED_CHANNEL)}, old.id);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger tokens_revoked after delete or update of token_hash, user_id, expires_at on tokens
    for each row execute function coffre_token_revoked()`.execute(db);
}

/** The same announcement on SQLite: temporary triggers calling `notify(channel, id)` on the connection that creates them. */
export function sqliteTokenTriggers(notify: string): string[] {
  const call = `select ${notify}('${TOKEN_REVOKED_CHANNEL}', old.id);`;
  return [
    `create temp trigger if not exists coffre_tokens_deleted after delete on main.tokens begin ${call} end`,
    `create temp trigger if not exists coffre_tokens_altered after update of token_hash, user_id, expires_at on main.tokens begin ${call} end`,
  ];
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop trigger tokens_revoked on tokens`.execute(db);
  await sql`drop function coffre_token_revoked()`.execute(db);
}
