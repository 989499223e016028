// Dead letters for the console's tests, on the embedded log of one schema: four records of topic `orders` read by
// group `billing` up to offset 4; three of them dead (two of one cause, one of another), one of those applied after
// all, one carrying markup in its payload, another in a header; a later record of key order-1 applied.
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

export const hostilePayload = '{"note":"<script>window.__xss = 1</script>","id":1}';
export const hostileHeader = '<img src=x onerror="window.__xss = 2">';

export interface Seeded {
  topic: string;
  group: string;
  /** Dead-letter ids by what they are. */
  ids: { script: string; applied: string; header: string };
}

export async function seedConsole(db: Db, schema: string, topic = 'orders', group = 'billing'): Promise<Seeded> {
  const transport = postgresTransport({ db, schema });
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 1 }]);
  await admin.close();
  const inputs: { key: string; data: unknown; headers: Record<string, string> }[] = [
    { key: 'order-1', data: { note: 'x' }, headers: {} },
    { key: 'order-2', data: { total: 12 }, headers: {} },
    { key: 'order-1', data: { total: 13 }, headers: {} },
    { key: 'order-3', data: { total: 14 }, headers: { 'x-note': hostileHeader } },
  ];
  const events = inputs.map((input) => createEvent({ topic, type: 'OrderPlaced', source: 'shop', ...input }));
  const records = events.map(encodeEvent);
  records[0]!.value = Buffer.from(hostilePayload);
  const producer = transport.producer({ clientId: 'seed' });
  await producer.send(records);
  await producer.close();
  await db.query(`INSERT INTO ${schema}.log_offsets (group_id, topic, partition, next_offset) VALUES ($1, $2, 0, 4)`, [
    group,
    topic,
  ]);
  const store = deadLetterStore({ schema });
  const keep = async (offset: number, error: Error) =>
    (await store.keep(db, {
      consumer: group,
      record: {
        topic,
        partition: 0,
        offset: String(offset),
        key: Buffer.from(events[offset]!.key),
        value: records[offset]!.value as Buffer,
        headers: Object.fromEntries(
          Object.entries(records[offset]!.headers ?? {}).map(([name, value]) => [name, Buffer.from(value)]),
        ),
        timestamp: Date.now(),
      },
      eventId: events[offset]!.id,
      error,
      attempts: 3,
      firstFailedAt: new Date(Date.now() - 60_000),
    }))!;
  const script = await keep(0, new PermanentError(`order ${events[0]!.id} has no seats left`));
  const applied = await keep(1, new PermanentError(`order ${events[1]!.id} has no seats left`));
  const header = await keep(3, new TypeError("Cannot read properties of undefined (reading 'price')"));
  await db.query(`INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2)`, [group, events[1]!.id]);
  await createEffects({ schema }).schedule(db, { key: 'order-1', kind: 'email:confirmation', payload: { to: 'ana' } });
  return { topic, group, ids: { script, applied, header } };
}
