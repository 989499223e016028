// A redrive goes back to the topic, where every group reading it sees the letter again: the retention guard must use
// the shortest dedup retention of any group, not only that of the group that gave up. Here the failing group keeps
// its dedup rows for ever, another keeps them a minute, and an hour-old letter must be refused. Its twin: with that
// other group's retention removed, the same redrive goes through (the guard is what refuses).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError, ErrorCodes, PermanentError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

test("redrive's retention guard takes another group's shorter dedup retention", async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'retention_guard';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  const store = deadLetterStore({ schema });
  const out = encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n: 1 } }));
  const headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, Buffer.from(v)]));
  const record: IncomingRecord = { ...out, key: Buffer.from('k'), partition: 0, offset: '0', headers, timestamp: 0 };
  await store.keep(db, {
    consumer: 'tickets',
    record,
    eventId: null,
    error: new PermanentError('bad'),
    attempts: 1,
    firstFailedAt: new Date(Date.now() - 3_600_000),
  });
  await db.query(
    `INSERT INTO ${schema}.consumer_groups (name, dedup_keep_ms) VALUES ('tickets', NULL), ('audit', 60000)`,
  );
  await assert.rejects(
    store.redrive(db, producer, { consumer: 'tickets' }),
    (error: unknown) => error instanceof EffectivelyError && error.code === ErrorCodes.EFF_REDRIVE_BEYOND_RETENTION,
  );
  // The twin: without the other group's window the same letter is redriven.
  await db.query(`UPDATE ${schema}.consumer_groups SET dedup_keep_ms = NULL WHERE name = 'audit'`);
  assert.equal((await store.redrive(db, producer, { consumer: 'tickets' })).length, 1);
});
