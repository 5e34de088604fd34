import type { Kysely } from 'kysely';

/**
 * Resumable uploads (issue 32, tus 1.0.0 at /api/uploads/). A row is an upload not yet become a
 * file (`open`), or one that did (`done`, with its `file_id`, kept until it expires so a client
 * that lost the last answer learns the outcome). The content so far is the blob store's staging
 * (`staging`, under `blob_id`) plus the sealed tail (`tail`, base64): never plaintext. The data
 * key is wrapped by the server key. `lock_token` and `locked_until` are a lease: one request at a
 * time writes an upload, whichever instance it reaches. The quota is held by the `upload_holds`
 * row of the same id, whose lease is the upload's expiry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('resumable_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('folder_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('on_conflict', 'text', (c) => c.notNull())
    // The raw Upload-Metadata header, answered back by HEAD.
    .addColumn('metadata', 'text', (c) => c.notNull())
    // Null while the length is deferred (Upload-Defer-Length: 1).
    .addColumn('length', 'bigint')
    .addColumn('received', 'bigint', (c) => c.notNull())
    .addColumn('blob_id', 'text', (c) => c.notNull())
    .addColumn('data_key_wrapped', 'text', (c) => c.notNull())
    .addColumn('header', 'text', (c) => c.notNull())
    .addColumn('tail', 'text', (c) => c.notNull())
    .addColumn('staging', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('lock_token', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('locked_until', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resumable_uploads_user_idx').on('resumable_uploads').columns(['user_id', 'state']).execute();
  await db.schema.createIndex('resumable_uploads_expires_idx').on('resumable_uploads').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('resumable_uploads').execute();
}
