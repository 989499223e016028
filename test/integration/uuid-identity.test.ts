// Which UUID ids are their own dedup key (issue 38, point 3), end to end on the embedded log, on PGlite and on the
// PostgreSQL server: two producers sending the same name-based (v5) or nil UUID for two events both get applied (keyed
// by source + id), the same v7 UUID from two sources is one event (the second a duplicate), and an event of this
// library (UUIDv7) applied by an earlier version, whose row holds its id, is still a duplicate after the upgrade.
// The naive twin of the rule (every UUID its own key) is in test/unit/event-identity.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { uuidv5 } from '../../src/envelope/identity.ts';
import { uuidv7 } from '../../src/envelope/uuidv7.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eitherDb } from '../support/either-db.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const database = eitherDb();

const foreign = (id: string, source: string, n: number): Event => ({
  id,
  topic: 'invoices',
  type: 'invoice.issued',
  source,
  key: 'customer-7',
  time: '2026-12-04T04:00:00.000Z',
  data: { n },
  headers: {},
});

for (const where of ['pglite', 'server'] as const) {
  test(`${where}: a v5 or nil UUID from two sources is two events; a v7 UUID from two sources is one; an event applied before the upgrade stays a duplicate`, async (t) => {
    if (where === 'server' && !(await needs(t, 'postgres'))) return;
    const { db, schema } = await database(t, where);
    const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
    await transport.admin().createTopics([{ topic: 'invoices', partitions: 1 }]);
    const group = 'billing-reader';
    // One of ours, applied by an earlier version: its row holds its id (its own key then and now).
    const ours = createEvent({ topic: 'invoices', type: 'invoice.issued', source: '/shop', key: 'k', data: { n: 0 } });
    await db.query(`INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2)`, [group, ours.id]);
    const v5 = uuidv5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'urn:invoice:2026-000123');
    const nil = '00000000-0000-0000-0000-000000000000';
    const v7 = uuidv7();
    const events = [
      ours,
      foreign(v5, '/billing', 1),
      foreign(v5, '/shipping', 2),
      foreign(nil, '/billing', 3),
      foreign(nil.toUpperCase(), '/shipping', 4),
      foreign(v7, '/billing', 5),
      foreign(v7, '/mirror', 6), // the same event republished by a bridge
      foreign('last', '/billing', 7),
    ];
    const producer = transport.producer();
    t.after(() => producer.close());
    await producer.send(events.map((event) => encodeEvent(event)));
    const applied: number[] = [];
    const outcomes: string[] = [];
    const consumer = createConsumer({
      db,
      transport,
      group,
      topics: ['invoices'],
      schema,
      logger: silentLogger,
      handler: async (event) => {
        applied.push((event.data as { n: number }).n);
      },
      onOutcome: (_event, outcome) => {
        outcomes.push(outcome);
      },
    });
    await consumer.start();
    t.after(() => consumer.close());
    // One partition: once the last event is applied, every one before it was settled.
    await eventually(async () => applied.includes(7), 60_000, 'the last event applied');
    assert.deepEqual(applied, [1, 2, 3, 4, 5, 7]);
    assert.equal(outcomes.filter((outcome) => outcome === 'duplicate').length, 2, 'ours and the mirrored v7');
  });
}
