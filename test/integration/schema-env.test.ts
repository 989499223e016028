// The library's schema configured once: EFFECTIVELY_SCHEMA is the default of every constructor and of the CLI, so a
// deployment need not pass `schema` to six of them. PGlite in process; the CLI against the real PostgreSQL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { cli } from '../support/cli.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('EFFECTIVELY_SCHEMA: migrate, outbox, relay, embedded log, consumer, dead letters and effects all use it', async (t) => {
  const before = process.env.EFFECTIVELY_SCHEMA;
  process.env.EFFECTIVELY_SCHEMA = 'shop_lib';
  t.after(() => {
    if (before === undefined) delete process.env.EFFECTIVELY_SCHEMA;
    else process.env.EFFECTIVELY_SCHEMA = before;
  });
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db);
  const schemas = await db.query<{ s: string }>(
    "SELECT DISTINCT table_schema AS s FROM information_schema.tables WHERE table_name = 'outbox'",
  );
  assert.deepEqual(
    schemas.rows.map((r) => r.s),
    ['shop_lib'],
  );
  const transport = postgresTransport({ db });
  const seen: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    logger: silentLogger,
    handler: async (event) => void seen.push((event.data as { n: number }).n),
  });
  t.after(() => consumer.close());
  await consumer.start();
  const relay = createRelay({ db, producerFactory: () => transport.producer(), logger: silentLogger });
  t.after(() => relay.close());
  await relay.start();
  await db.transaction((tx) =>
    createOutbox().enqueue(tx, createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n: 7 } })),
  );
  await eventually(async () => seen.length === 1, 20_000, 'applied through the schema of the variable');
  const dedup = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM shop_lib.processed_events');
  assert.equal(dedup.rows[0]?.n, 1);
  assert.deepEqual(await deadLetterStore().list(db), []);
  assert.equal(await createEffects().count(db, 'pending'), 0);
  // an explicit schema still wins; a bad variable is refused like a bad option
  assert.throws(() => createOutbox({ schema: 'Bad-Name' }), { code: 'EFF_INVALID_IDENTIFIER' });
  process.env.EFFECTIVELY_SCHEMA = 'Bad-Name';
  assert.throws(() => createOutbox(), { code: 'EFF_INVALID_IDENTIFIER' });
});

test('EFFECTIVELY_SCHEMA: the CLI reads it when --schema is not given', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const run = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, [cli, 'dlq', 'list'], {
      env: { ...process.env, DATABASE_URL: defaultDatabaseUrl(), ...env },
    }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, out: error.stderr }),
    );
  assert.deepEqual(await run({ EFFECTIVELY_SCHEMA: schema }), { code: 0, out: 'dlq: listed 0\n' });
  const other = await run({ EFFECTIVELY_SCHEMA: `${schema}_none` });
  assert.equal(other.code, 1);
  assert.match(other.out, new RegExp(`EFF_NOT_MIGRATED.*--schema ${schema}_none`));
});
