import { sql, type Kysely } from 'kysely';

// Written once for both dialects: only types and constructs SQLite and PostgreSQL share.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('quota_bytes', 'bigint')
    .addColumn('default_datahub_id', 'text')
    .addColumn('default_bucket_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('tokens_user_idx').on('tokens').columns(['user_id', 'kind']).execute();

  await db.schema
    .createTable('throttles')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('regions')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('name_fr', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('locations')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('region_id', 'integer', (c) => c.notNull().references('regions.id'))
    .addColumn('region_code', 'text', (c) => c.notNull().unique())
    .addColumn('country_code', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('name_fr', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('locations_region_idx').on('locations').column('region_id').execute();

  await db.schema
    .createTable('datahubs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('location_id', 'integer', (c) => c.notNull().references('locations.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('datahubs_owner_idx').on('datahubs').column('owner_id').execute();

  await db.schema
    .createTable('buckets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('datahub_id', 'text', (c) => c.notNull().references('datahubs.id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('root_folder_id', 'text')
    .addColumn('key_wrapped', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('buckets_owner_name_unique', ['owner_id', 'name'])
    .execute();
  await db.schema.createIndex('buckets_datahub_idx').on('buckets').column('datahub_id').execute();

  await db.schema
    .createTable('folders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bucket_id', 'text', (c) => c.notNull().references('buckets.id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('parent_id', 'text', (c) => c.references('folders.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .addColumn('is_share', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('hash_url', 'text', (c) => c.notNull().unique())
    .addColumn('key_wrapped', 'text', (c) => c.notNull())
    .addColumn('is_root', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('trash_batch', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('deleted_at', 'text')
    .addColumn('subtree_files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('subtree_folders', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('subtree_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('child_folders', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('child_files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_access_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Sibling names are unique among live items; trashed ones may repeat.
  await db.schema
    .createIndex('folders_live_name_unique')
    .on('folders')
    .columns(['parent_id', 'name'])
    .unique()
    .where(sql.ref('trash_batch'), '=', '')
    .execute();
  // Keyset pagination of a folder's children by name.
  await db.schema.createIndex('folders_children_idx').on('folders').columns(['parent_id', 'trash_batch', 'name', 'id']).execute();
  await db.schema.createIndex('folders_bucket_idx').on('folders').columns(['bucket_id', 'trash_batch', 'id']).execute();
  await db.schema.createIndex('folders_trash_idx').on('folders').columns(['trash_batch', 'owner_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['folders', 'buckets', 'datahubs', 'locations', 'regions', 'throttles', 'tokens', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
