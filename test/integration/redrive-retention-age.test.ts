// The redrive retention guard ages a letter from its event's own time, not from when the lagging group gave up on it.
// Group A applied E at T0 (its dedup row ages from then); group B dead-lettered E at T0 + 6 d; at T0 + 8 d, with A's
// 7-day retention, a redrive would reach A after its dedup row is purged and A would apply E twice. Real PostgreSQL
// (the database's clock), the embedded log in the same database as the redrive's target.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError, ErrorCodes, PermanentError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const day = 86_400_000;

/** E written 8 days ago, dead-lettered by B 2 days ago; A keeps dedup rows 7 days. `withTime`: keep its ce_time. */
async function redrive(t: import('node:test').TestContext, withTime: boolean) {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  const store = deadLetterStore({ schema });
  const written = new Date(Date.now() - 8 * day);
  const out = encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {}, time: written }));
  const headers = Object.fromEntries(
    Object.entries(out.headers)
      .filter(([name]) => withTime || name !== 'ce_time')
      .map(([k, v]) => [k, Buffer.from(v)]),
  );
  const record: IncomingRecord = { ...out, key: Buffer.from('k'), partition: 0, offset: '0', headers, timestamp: 0 };
  await store.keep(db, {
    consumer: 'b',
    record,
    eventId: null,
    error: new PermanentError('bad'),
    attempts: 1,
    firstFailedAt: new Date(Date.now() - 2 * day),
  });
  await db.query(`INSERT INTO ${schema}.consumer_groups (name, dedup_keep_ms) VALUES ('a', $1), ('b', $1)`, [7 * day]);
  return store.redrive(db, producer, { consumer: 'b' });
}

test('a letter whose event is older than a group dedup retention is refused, though it failed recently', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  await assert.rejects(
    redrive(t, true),
    (error: unknown) => error instanceof EffectivelyError && error.code === ErrorCodes.EFF_REDRIVE_BEYOND_RETENTION,
  );
});

test('naive twin: aged from its first failure only (no event time to read), the same letter is redriven', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.equal((await redrive(t, false)).length, 1);
});
