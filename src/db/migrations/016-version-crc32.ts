import { type Kysely } from 'kysely';

/**
 * Each version's CRC-32 of its plaintext, beside its SHA-256 (issue 33): a zip archive's records
 * carry every entry's CRC before its content, so an archive laid out before its first byte (and
 * resumed in its middle) needs them all known. Null for versions uploaded before this column; the
 * first archive needing one computes it by reading the content, and records it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // bigint: a CRC-32 reaches 2^32 - 1, past PostgreSQL's integer.
  await db.schema.alterTable('file_versions').addColumn('crc32', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('file_versions').dropColumn('crc32').execute();
}
