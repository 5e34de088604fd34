import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DIALECTS, build } from './helper.js';

// Statements are kept prepared (SQLite) or named (PostgreSQL) by SQL text: src/db/database.ts.
for (const dialect of DIALECTS) {
  describe(`prepared statements [${dialect}]`, () => {
    it('a repeated query text answers with each call\'s own values', async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      const pick = (n: number) => sql<{ n: number }>`select ${n} + 0 as n`.execute(db);
      for (let i = 0; i < 5; i++) assert.equal(Number((await pick(i)).rows[0].n), i);
      const values = await Promise.all(Array.from({ length: 20 }, (_, i) => pick(i)));
      assert.deepEqual(values.map((r) => Number(r.rows[0].n)), Array.from({ length: 20 }, (_, i) => i));
    });

    it('a table changed under a prepared statement is read again with its new columns', async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      await sql`create table stmt_probe (id integer primary key, a text)`.execute(db);
      await sql`insert into stmt_probe (id, a) values (1, 'one')`.execute(db);
      const read = () => sql<Record<string, unknown>>`select * from stmt_probe where id = ${1}`.execute(db);
      assert.deepEqual(Object.keys((await read()).rows[0]).sort(), ['a', 'id']);
      // Run it on every pooled connection, then change the table under all of them.
      await Promise.all(Array.from({ length: 5 }, read));
      await sql`alter table stmt_probe add column b text`.execute(db);
      for (let i = 0; i < 10; i++) assert.deepEqual(Object.keys((await read()).rows[0]).sort(), ['a', 'b', 'id']);
    });
  });
}
