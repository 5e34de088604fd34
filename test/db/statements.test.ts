import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { PLANNED_EACH_TIME, SQLITE_CACHE_KIB } from '../../src/db/database.js';
import { preparedQuery } from '../../src/db/prepared-query.js';
import { DIALECTS, build } from '../helper.js';

// Statements are kept prepared (SQLite) or named (PostgreSQL) by SQL text: src/db/database.ts;
// hot queries are compiled once: src/db/prepared-query.ts.
for (const dialect of DIALECTS) {
  describe(`prepared statements [${dialect}]`, () => {
    if (dialect === 'sqlite') {
      it('SQLite keeps its temporary tables and journals in memory, not in files', async (t) => {
        const { database } = await build(t, dialect);
        const rows = (await sql<{ temp_store: number }>`pragma temp_store`.execute(database.db)).rows;
        assert.equal(Number(rows[0].temp_store), 2);
      });

      it("SQLite's page cache is its stock 2 MB, not better-sqlite3's larger build default", async (t) => {
        const { database } = await build(t, dialect);
        const rows = (await sql<{ cache_size: number }>`pragma cache_size`.execute(database.db)).rows;
        assert.equal(Number(rows[0].cache_size), -SQLITE_CACHE_KIB);
        // The assumption the setting rests on: a bare connection would cache more (16 MB today).
        const bare = new SQLite(':memory:');
        t.after(() => bare.close());
        assert.ok(
          -Number(bare.pragma('cache_size', { simple: true })) > SQLITE_CACHE_KIB,
          'better-sqlite3 builds SQLite with a larger cache',
        );
      });
    }

    it("a repeated query text answers with each call's own values", async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      const pick = (n: number) => sql<{ n: number }>`select ${n} + 0 as n`.execute(db);
      for (let i = 0; i < 5; i++) assert.equal(Number((await pick(i)).rows[0].n), i);
      const values = await Promise.all(Array.from({ length: 20 }, (_, i) => pick(i)));
      assert.deepEqual(
        values.map((r) => Number(r.rows[0].n)),
        Array.from({ length: 20 }, (_, i) => i),
      );
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

    it('rows are plain objects of every column, a repeated name keeping its last value', async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      const result = await sql<Record<string, unknown>>`select ${'x'} as a, null as b, 1.5 as c, ${'first'} as d, ${'last'} as d`.execute(
        db,
      );
      assert.equal(result.rows.length, 1);
      const row = result.rows[0];
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
      assert.deepEqual(Object.keys(row), ['a', 'b', 'c', 'd']);
      assert.equal(row.a, 'x');
      assert.equal(row.b, null);
      assert.equal(Number(row.c), 1.5);
      assert.equal(row.d, 'last');
    });

    it("a prepared query runs with each call's values, also inside a transaction, and keeps its constants", async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      await sql`create table prepared_probe (id integer primary key, kind text not null, name text not null)`.execute(db);
      await sql`insert into prepared_probe (id, kind, name) values (1, 'a', 'one'), (2, 'a', 'two'), (3, 'b', 'three'), (4, 'a', 'four')`.execute(
        db,
      );
      const probe = db.withTables<{ prepared_probe: { id: number; kind: string; name: string } }>();
      const byKind = preparedQuery((q: typeof probe, p: { afterId: number; take: number }) =>
        q
          .selectFrom('prepared_probe')
          .select(['id', 'name'])
          .where('kind', '=', 'a')
          .where('id', '>', p.afterId)
          .orderBy('id')
          .limit(p.take),
      );
      const run = (afterId: number, take: number) => byKind.execute(probe, { afterId, take });
      assert.deepEqual(
        (await run(0, 2)).map((r) => Number(r.id)),
        [1, 2],
      );
      assert.deepEqual(
        (await run(1, 5)).map((r) => Number(r.id)),
        [2, 4],
      );
      assert.deepEqual(
        (await Promise.all([run(0, 1), run(2, 1), run(4, 1)])).map((rows) => rows.map((r) => r.name)),
        [['one'], ['four'], []],
      );
      const inTransaction = await probe.transaction().execute(async (trx) => {
        await trx.insertInto('prepared_probe').values({ id: 5, kind: 'a', name: 'five' }).execute();
        return byKind.execute(trx, { afterId: 4, take: 10 });
      });
      assert.deepEqual(inTransaction, [{ id: 5, name: 'five' }]);
      assert.equal(await byKind.takeFirst(probe, { afterId: 5, take: 1 }), undefined);
    });

    // On SQLite a prepared query runs straight on the one connection (runImmediately in database.ts).
    it("a prepared query never reads another caller's open transaction, and reads its own", async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      await sql`create table isolation_probe (id integer primary key, name text not null)`.execute(db);
      await sql`insert into isolation_probe (id, name) values (1, 'before')`.execute(db);
      const probe = db.withTables<{ isolation_probe: { id: number; name: string } }>();
      const nameOf = preparedQuery((q: typeof probe, p: { id: number }) =>
        q.selectFrom('isolation_probe').select('name').where('id', '=', p.id),
      );
      const seenOutside: Promise<string | undefined>[] = [];
      await assert.rejects(
        probe.transaction().execute(async (trx) => {
          await trx.updateTable('isolation_probe').set({ name: 'uncommitted' }).where('id', '=', 1).execute();
          assert.equal((await nameOf.takeFirst(trx, { id: 1 }))?.name, 'uncommitted', 'the transaction reads its own write');
          // Started while the transaction is open: must not read its write, now or after the rollback.
          seenOutside.push(nameOf.takeFirst(probe, { id: 1 }).then((row) => row?.name));
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await seenOutside[0], 'before');
      assert.equal((await nameOf.takeFirst(probe, { id: 1 }))?.name, 'before');
    });

    if (dialect === 'postgres') {
      it('a statement led by PLANNED_EACH_TIME is sent unnamed (planned at each run); the same text without it is kept prepared', async (t) => {
        const { database } = await build(t, dialect);
        const prepared = (trx: typeof database.db) =>
          sql<{ statement: string }>`select statement from pg_prepared_statements where statement like ${'%each_time_probe%'}`.execute(trx);
        const kept = await database.db.transaction().execute(async (trx) => {
          const text = (lead: string) => sql<{ each_time_probe: number }>`${sql.raw(lead)}select ${7} + 0 as each_time_probe`;
          for (let i = 0; i < 3; i++) assert.equal(Number((await text(PLANNED_EACH_TIME).execute(trx)).rows[0].each_time_probe), 7);
          const unnamedOnly = (await prepared(trx)).rows.length;
          await text('').execute(trx);
          return { unnamedOnly, named: (await prepared(trx)).rows.map((row) => row.statement) };
        });
        assert.equal(kept.unnamedOnly, 0);
        assert.equal(kept.named.length, 1);
        assert.ok(!kept.named[0].includes('planned each time'), kept.named[0]);
      });
    }

    it('a prepared query refuses a value that does not become a parameter', async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      // Used to name a column, the value would be baked into the SQL text once and for all.
      const wrong = preparedQuery((_db, p: { column: string }) => db.selectFrom('users').select(sql.ref(p.column).as('x')));
      await assert.rejects(wrong.execute(db, { column: 'email' }), /value "column" is not a parameter/);
    });
  });
}
