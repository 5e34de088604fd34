import { sql, type Kysely } from 'kysely';

/**
 * The trash purge's indexes on `deleted_at` hold only trashed rows. A live file or folder has no
 * `deleted_at`, yet every upload and every new folder added an entry for its null to these
 * B-trees (one index write of about nine per file row), for a purge that only ever asks for
 * `deleted_at < cutoff`, which implies `deleted_at is not null` for PostgreSQL's and SQLite's
 * planners alike.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['files', 'folders']) {
    await db.schema.dropIndex(`${table}_deleted_idx`).execute();
    await db.schema
      .createIndex(`${table}_deleted_idx`)
      .on(table)
      .column('deleted_at')
      .where(sql.ref('deleted_at'), 'is not', null)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['files', 'folders']) {
    await db.schema.dropIndex(`${table}_deleted_idx`).execute();
    await db.schema.createIndex(`${table}_deleted_idx`).on(table).column('deleted_at').execute();
  }
}
