// A schema never migrated: every entry point says EFF_NOT_MIGRATED and names the command to run, instead of a raw
// `relation "x.dead_letters" does not exist` (CLI), a relay retrying the same raw error for ever, or a consumer's
// start() rejecting with it. Real PostgreSQL and PGlite.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { notMigrated } from '../../src/db/not-migrated.ts';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { sqlState } from '../../src/db/sqlstate.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { cli } from '../support/cli.ts';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const notMigratedError = (schema: string) => (error: unknown) => {
  const coded = error as { code?: string; message?: string; retryable?: boolean };
  assert.equal(coded.code, 'EFF_NOT_MIGRATED', String(error));
  assert.match(coded.message ?? '', new RegExp(`npx effectively migrate --schema ${schema}`));
  assert.equal(coded.retryable, true);
  assert.equal(sqlState(error), '42P01', 'the SQLSTATE is still there for code that classifies by it');
  return true;
};

async function unmigrated(t: import('node:test').TestContext): Promise<{ db: Db; schema: string }> {
  const db = pgDb({ max: 4 });
  const schema = randomName('nm');
  t.after(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.close();
  });
  return { db, schema };
}

test('not migrated: the CLI prints one coded line naming migrate, no stack', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await unmigrated(t);
  const result = await promisify(execFile)(process.execPath, [cli, 'dlq', 'list', '--schema', schema]).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    new RegExp(`^effectively: EFF_NOT_MIGRATED: .*npx effectively migrate --schema ${schema}`, 'm'),
  );
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

test('not migrated: enqueue in the caller transaction, consumer start and relay start say so; migrate fixes all', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await unmigrated(t);
  const event = createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n: 1 } });
  // the caller's own transaction (a plain pg client, not the library's Db)
  await assert.rejects(
    db.transaction((tx) => createOutbox({ schema }).enqueue(tx, event)),
    notMigratedError(schema),
  );
  const transport = postgresTransport({ db, schema });
  const consumer = createConsumer({
    db,
    transport,
    schema,
    group: 'g',
    topics: ['orders'],
    logger: silentLogger,
    handler: async () => undefined,
  });
  t.after(() => consumer.close());
  await assert.rejects(consumer.start(), notMigratedError(schema));

  const relay = createRelay({
    db,
    schema,
    producerFactory: () => transport.producer(),
    listen: false,
    logger: silentLogger,
  });
  t.after(() => relay.close());
  await assert.rejects(relay.start(), notMigratedError(schema));
  // once migrated, the same calls work: nothing else was needed
  await migrate(db, { schema });
  await db.transaction((tx) => createOutbox({ schema }).enqueue(tx, event));
  const again = createRelay({
    db,
    schema,
    producerFactory: () => transport.producer(),
    listen: false,
    logger: silentLogger,
  });
  t.after(() => again.close());
  assert.equal(await again.drain(10_000), 1);
});

test('not migrated: the same on PGlite; a handler table of its own that is missing is left as it is', async () => {
  const db = await pgliteDb();
  try {
    await assert.rejects(db.query('SELECT * FROM effectively.dead_letters'), notMigratedError('effectively'));
    await assert.rejects(db.query('SELECT * FROM public.my_orders'), (error: unknown) => {
      assert.equal((error as { code?: string }).code, '42P01', "a table that is not the library's: the driver error");
      return true;
    });
  } finally {
    await db.close();
  }
  assert.equal(notMigrated({ code: '42P01', message: 'relation "shop.orders" does not exist' }), undefined);
  assert.equal(notMigrated({ code: '42703', message: 'relation "x.outbox" does not exist' }), undefined);
  assert.equal(notMigrated(new Error('relation "x.outbox" does not exist')), undefined);
});
