// Per-key order across transactions. The relay publishes, among the rows visible together, in `seq` order; a `seq` is
// taken at INSERT, not at COMMIT. Two transactions writing one key at once can commit in the other order, and the
// relay cannot know a lower seq is still to come. The documented rule (docs/relay.md): serialize the writers of one
// key on the aggregate's row (SELECT ... FOR UPDATE before enqueueing). The naive twin shows what it prevents.
// The lock is the application's part; the library's, tested here, is the relay's: it publishes nothing of a transaction
// still open, and the rows visible together in one pass in seq order (the serialized writers' two rows go out in one
// pass, so their order is the relay's, not the test's: with the relay's fetch ordered by seq descending it fails).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Queryable } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function setup(t: import('node:test').TestContext) {
  const { db, schema } = await freshSchema(t);
  await db.query(`CREATE TABLE ${schema}.orders (id text PRIMARY KEY, status text NOT NULL)`);
  await db.query(`INSERT INTO ${schema}.orders VALUES ('K', 'new')`);
  const outbox = createOutbox({ schema });
  const transport = postgresTransport({ db, schema });
  const relay = createRelay({
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
    listen: false,
    logger: silentLogger,
  });
  t.after(() => relay.close());
  /**
   * One writer of key K: locks order K first when `lock` (the rule; an UPDATE of that row does the same), enqueues
   * event `n`, then commits when `commit` resolves.
   */
  const writer = (n: number, lock: boolean, commit: Promise<void>, progress: string[]) =>
    db.transaction(async (tx: Queryable) => {
      if (lock) await tx.query(`SELECT 1 FROM ${schema}.orders WHERE id = 'K' FOR UPDATE`);
      await outbox.enqueue(tx, createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'K', data: { n } }));
      progress.push(`enqueued ${n}`);
      await commit;
    });
  const published = async (): Promise<number[]> => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT (convert_from(value, 'UTF8')::jsonb ->> 'n')::int AS n
         FROM ${schema}.log_records WHERE key = 'K' ORDER BY "offset"`,
    );
    return rows.map((row) => row.n);
  };
  return { db, relay, writer, published };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('writers of one key serialized on the aggregate row: the relay publishes them in commit order', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { relay, writer, published } = await setup(t);
  const progress: string[] = [];
  const first = gate();
  const one = writer(1, true, first.promise, progress);
  await until(() => progress.includes('enqueued 1'));
  // The second writer starts while the first is open: it waits on the order's row lock, before taking any seq.
  const two = writer(2, true, Promise.resolve(), progress);
  await relay.drain(2000);
  assert.deepEqual(progress, ['enqueued 1'], 'the second writer waits for the first');
  assert.deepEqual(await published(), [], 'nothing of the open transaction was published');
  first.open();
  await Promise.all([one, two]);
  // Both rows are visible together now, and one pass publishes them: in seq order.
  await relay.drain(2000);
  assert.deepEqual(await published(), [1, 2]);
});

test('naive twin: two unserialized writers of one key commit out of seq order, and the relay publishes 2 before 1', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { relay, writer, published } = await setup(t);
  const progress: string[] = [];
  const first = gate();
  const one = writer(1, false, first.promise, progress);
  await until(() => progress.includes('enqueued 1'));
  // Without the lock the second writer takes a higher seq and commits while the first is still open.
  await writer(2, false, Promise.resolve(), progress);
  await relay.drain(2000);
  assert.deepEqual(await published(), [2], 'the second writer committed first and was published alone');
  first.open();
  await one;
  await relay.drain(2000);
  assert.deepEqual(await published(), [2, 1], 'event 1 (lower seq) published after event 2');
});
