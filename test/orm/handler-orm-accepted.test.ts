// fromKysely / fromDrizzle given the ORM of a consumer's handler (kyselyIn(ctx.tx), drizzleIn(ctx.tx)): a database
// object, but every statement of it runs in the consumer's transaction, so it is accepted (as prismaIn's clients are),
// also after withSchema / withPlugin. Its rows commit and roll back with that transaction. The database itself is
// still refused (not-a-transaction.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drizzle } from 'drizzle-orm/node-postgres';
import { CamelCasePlugin } from 'kysely';
import pg from 'pg';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { drizzleIn, fromDrizzle } from '../../src/orm/drizzle.ts';
import { fromKysely, kyselyIn } from '../../src/orm/kysely.ts';
import { freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

class Rollback extends Error {}

const views: [string, (tx: Queryable) => Queryable][] = [
  ['kyselyIn', (tx) => fromKysely(kyselyIn(tx))],
  [
    'kyselyIn().withSchema().withPlugin()',
    (tx) => fromKysely(kyselyIn(tx).withSchema('public').withPlugin(new CamelCasePlugin())),
  ],
  ['drizzleIn', (tx) => fromDrizzle(drizzleIn(tx))],
];

async function write(db: Db, name: string, view: (tx: Queryable) => Queryable, id: string, fail: boolean) {
  await db
    .transaction(async (tx) => {
      await view(tx).query(`INSERT INTO ${name} VALUES ($1)`, [id]);
      if (fail) throw new Rollback('a later record of the batch fails');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
}

test("the handler's own ORM is accepted and writes in the consumer's transaction", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = `${schema}.${randomName('rows')}`;
  await db.query(`CREATE TABLE ${name} (id text PRIMARY KEY)`);
  for (const [label, view] of views) {
    await write(db, name, view, `${label}: committed`, false);
    await write(db, name, view, `${label}: rolled back`, true);
  }
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${name} ORDER BY id`);
  assert.deepEqual(
    rows.map((row) => row.id),
    views.map(([label]) => `${label}: committed`).sort(),
  );
});

test('fromDrizzle takes a Drizzle over a node-postgres client in a transaction of yours (BEGIN sent), not before', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const client = new pg.Client({ connectionString: defaultDatabaseUrl() });
  await client.connect();
  t.after(() => client.end());
  const db = drizzle({ client });
  assert.throws(() => fromDrizzle(db), { code: 'EFF_INVALID_OPTIONS' }, 'no transaction open on it: refused');
  await client.query('BEGIN');
  await client.query("SET LOCAL effectively.test_mark = 'yours'");
  const { rows } = await fromDrizzle(db).query<{ mark: string }>(
    "SELECT current_setting('effectively.test_mark', true) AS mark",
  );
  assert.equal(rows[0]!.mark, 'yours');
  await client.query('ROLLBACK');
});
