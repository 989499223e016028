// Key order with two members (issue 27, item 7): a parked record that fails in one member's drain is given up on after
// its transaction rolled back, which released the hold's lock. Another member's drainer can apply the record in
// between; the first then dead-lettered an applied event and held its key with it, and every later record of the key
// waited for an operator. Now the give-up locks the hold again and leaves a record no longer parked alone.
// Deterministic: member b starts only once member a's drain step has rolled back (a fault point holds it there).
// Real PostgreSQL, the postgres transport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { PermanentError, TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const v = (event: Event) => (event.data as { v: number }).v;

test('two drainers, one parked record failing on one of them: the other applies it, nothing is dead-lettered, the key flows', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: 10 });
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, heartbeatMs: 100, leaseMs: 1000 });
  const topic = 'drained';
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  const send = async (n: number) => {
    const producer = transport.producer();
    await producer.send([encodeEvent(createEvent({ topic, type: 't', source: '/drain', key: 'K', data: { v: n } }))]);
    await producer.close();
  };
  let fixed = false;
  const applied: { member: string; v: number }[] = [];
  let aRolledBack = false;
  let release!: () => void;
  const bApplied = new Promise<void>((resolve) => {
    release = resolve;
  });
  const member = (name: 'a' | 'b') =>
    createConsumer({
      db,
      transport,
      group: 'g',
      topics: [topic],
      schema,
      logger: silentLogger,
      keyOrdered: true,
      drainIntervalMs: 100,
      maxAttempts: 1,
      handler: async (event) => {
        if (v(event) === 1 && !fixed) throw new PermanentError('bad until fixed');
        if (name === 'a' && v(event) === 2) throw new TransientError('member a cannot apply it now');
      },
      onOutcome: (event, outcome) => {
        if (outcome !== 'applied') return;
        applied.push({ member: name, v: v(event) });
        if (name === 'b' && v(event) === 2) release();
      },
      faults: async (point) => {
        if (name !== 'a' || point !== 'drain:after-rollback') return;
        aRolledBack = true;
        await bApplied;
      },
    });
  const a = member('a');
  t.after(() => a.close());
  await a.start();
  await send(1);
  await send(2);
  const store = deadLetterStore({ schema });
  const parked = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.parked_records`)).rows[0]!.n;
  await eventually(async () => (await parked()) === 1, 30_000, 'record 2 parked behind the dead record 1');
  fixed = true;
  await store.redrive(db, transport.producer());
  await eventually(async () => aRolledBack, 30_000, "member a's drain step of record 2 rolled back");
  const b = member('b');
  t.after(() => b.close());
  await b.start();
  await bApplied;
  await send(3);
  await eventually(async () => applied.some((x) => x.v === 3), 30_000, 'record 3 of the key applied').catch(
    (error: unknown) => {
      throw new Error(`${(error as Error).message}; applied ${JSON.stringify(applied)}`);
    },
  );
  await Promise.all([a.close(), b.close()]);
  assert.deepEqual(
    applied.map((x) => x.v),
    [1, 2, 3],
    'each record applied once, in order',
  );
  const dead = (await store.list(db)).filter((letter) => letter.status === 'dead');
  assert.deepEqual(dead, [], 'nothing dead-lettered: record 2 was applied');
});
