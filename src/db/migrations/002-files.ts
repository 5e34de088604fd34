import { sql, type Kysely } from 'kysely';

// Files, their versions and the stored blobs, and each account's used bytes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('used_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('blobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // 'uploading' until its first version commits; the collector reclaims stale ones after a crash.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('ref_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stored_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('blobs_collect_idx').on('blobs').columns(['ref_count', 'state', 'updated_at']).execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_id', 'text', (c) => c.notNull().references('buckets.id').onDelete('cascade'))
    .addColumn('folder_id', 'text', (c) => c.notNull().references('folders.id'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .addColumn('retention_period', 'text')
    .addColumn('retain_until', 'text')
    .addColumn('hash_name', 'text', (c) => c.notNull().unique())
    .addColumn('key_wrapped', 'text', (c) => c.notNull())
    .addColumn('current_version_id', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('version_count', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('versions_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('trash_batch', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('files_live_name_unique')
    .on('files')
    .columns(['folder_id', 'name'])
    .unique()
    .where(sql.ref('trash_batch'), '=', '')
    .execute();
  await db.schema.createIndex('files_folder_name_idx').on('files').columns(['folder_id', 'trash_batch', 'name', 'id']).execute();
  await db.schema.createIndex('files_folder_created_idx').on('files').columns(['folder_id', 'trash_batch', 'created_at', 'id']).execute();
  await db.schema.createIndex('files_folder_size_idx').on('files').columns(['folder_id', 'trash_batch', 'size', 'id']).execute();
  await db.schema.createIndex('files_trash_idx').on('files').columns(['trash_batch', 'owner_id']).execute();
  await db.schema.createIndex('files_bucket_idx').on('files').column('bucket_id').execute();

  await db.schema
    .createTable('file_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('file_id', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('blob_id', 'text', (c) => c.notNull().references('blobs.id'))
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    // The blob's data key wrapped by the file key (associated data: this version's id).
    .addColumn('data_key_wrapped', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('file_versions_file_idx').on('file_versions').columns(['file_id', 'id']).execute();
  await db.schema.createIndex('file_versions_blob_idx').on('file_versions').column('blob_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('file_versions').execute();
  await db.schema.dropTable('files').execute();
  await db.schema.dropTable('blobs').execute();
  await db.schema.alterTable('users').dropColumn('used_bytes').execute();
}
