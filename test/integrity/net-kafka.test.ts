// Network faults between the Kafka clients and a broker of the test's own, each client through its own fault proxy
// (the broker advertises the proxy's port on a listener per client, so metadata never routes around it):
// - a produce whose acknowledgement is lost: the records reach the broker, the answer never comes back; the producer's
//   request times out and it sends again on a new connection. Idempotent: one copy of each. Twin: the same producer
//   with idempotence off writes them twice.
// - a consumer cut from the group coordinator (and the whole broker) but not from PostgreSQL while it applies: the
//   coordinator expels it after its session, another member takes the partition and fetches the same records while the
//   cut member's transaction is still open. The dedup claim waits for that transaction and finds them claimed: every
//   event applied once, in order per key. Twin: the same cut with no dedup rows applies that batch twice.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type ProxiedListeners, proxiedListeners } from '../../scenarios/chaos/proxied-listeners.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

const names = ['ack', 'ack-twin', 'cut', 'cut-twin'];
const total = 200;

interface Broker {
  direct: Transport;
  listeners: ProxiedListeners;
  /** A transport whose every connection crosses `name`'s proxy. */
  through(name: string, rdkafka?: Record<string, string | number | boolean>): Transport;
  topic(partitions: number): Promise<string>;
}

async function privateBroker(t: TestContext): Promise<Broker | undefined> {
  const base = await freePorts(2 + names.length);
  const listeners = await proxiedListeners(
    names,
    names.map((_, i) => base + 2 + i),
  );
  const kafka = kafkaScript(t, {
    KAFKA_PORT: String(base),
    KAFKA_CONTROLLER_PORT: String(base + 1),
    ...listeners.env,
  });
  if (!kafka) return undefined;
  kafka.closeFirst(() => listeners.close());
  kafka.run(['start']);
  const options = { logger: silentLogger, closeTimeoutMs: 1000 };
  const direct = kafkaTransport({ ...options, brokers: [`127.0.0.1:${base}`] });
  const admin = direct.admin();
  kafka.closeFirst(() => admin.close());
  return {
    direct,
    listeners,
    through: (name, rdkafka = {}) => kafkaTransport({ ...options, brokers: listeners.brokers(name), rdkafka }),
    async topic(partitions) {
      const topic = randomName('net').replace('_', '-');
      await admin.createTopics([{ topic, partitions }]);
      return topic;
    },
  };
}

function keyedEvents(topic: string, count: number): Event[] {
  return Array.from({ length: count }, (_, n) =>
    createEvent({ topic, type: 'x', source: '/t', key: `k${n % 5}`, data: { n } }),
  );
}

/** Sends `count` events through `name`'s proxy with its answers silenced; returns how many copies reached the topic. */
async function lostAck(broker: Broker, name: string, rdkafka: Record<string, string | number | boolean>) {
  const topic = await broker.topic(1);
  const proxy = broker.listeners.proxy(name);
  // The request's own timeout is what notices the silence (a short one here: the test's time is the fault's).
  const producer = broker.through(name, { 'socket.timeout.ms': 1500, ...rdkafka }).producer();
  try {
    await producer.send([encodeEvent(createEvent({ topic, type: 'warm', source: '/t', key: 'w', data: {} }))]);
    const events = keyedEvents(topic, total);
    proxy.silence('down'); // the broker gets the records; its acknowledgement goes nowhere
    const sending = producer.send(events.map(encodeEvent));
    await sleep(500);
    proxy.heal(); // a new connection works again (the silent one stays silent)
    await sending;
    const records = await readTopic(broker.direct, topic, total + 1);
    await sleep(500); // copies still on their way would be read by now
    return { events, copies: records.length - 1, accepted: proxy.accepted };
  } finally {
    await producer.close();
  }
}

async function appliedTable(t: TestContext) {
  const { db, schema } = await freshSchema(t);
  await db.query(
    `CREATE TABLE ${schema}.applied (seq bigserial PRIMARY KEY, event_id uuid NOT NULL, key text NOT NULL, n int NOT NULL)`,
  );
  const insert = (tx: Pick<Db, 'query'>, event: Event) =>
    tx.query(`INSERT INTO ${schema}.applied (event_id, key, n) VALUES ($1, $2, $3)`, [
      event.id,
      event.key,
      (event.data as { n: number }).n,
    ]);
  const counts = async () =>
    (
      await db.query<{ total: number; distinct: number }>(
        `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM ${schema}.applied`,
      )
    ).rows[0]!;
  /** Keys whose events were applied out of order (by the order of their rows). */
  const outOfOrder = async () =>
    (
      await db.query<{ key: string }>(
        `SELECT DISTINCT key FROM (SELECT key, n, lag(n) OVER (PARTITION BY key ORDER BY seq) AS before
           FROM ${schema}.applied) s WHERE n <= before`,
      )
    ).rows.map((row) => row.key);
  /** Another session waits for a lock on this schema's rows (a member's claim behind the cut member's transaction). */
  const waitingOnLock = async () =>
    (
      await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [
        `%${schema}.%`,
      ])
    ).rowCount! > 0;
  return { db, schema, insert, counts, outOfOrder, waitingOnLock };
}

test('network faults between the Kafka clients and the broker', { concurrency: 4, timeout: 120_000 }, async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const broker = await privateBroker(t);
  if (!broker) return;

  const produce = async (events: Event[]) => {
    const producer = broker.direct.producer();
    await producer.send(events.map(encodeEvent));
    await producer.close();
  };

  await Promise.all(
    [
      () =>
        t.test('a produce whose acknowledgement is lost: the idempotent retry writes each record once', async () => {
          const { copies, accepted } = await lostAck(broker, 'ack', {});
          assert.ok(accepted >= 2, `the producer connected again after the silence (${accepted} connections)`);
          assert.equal(copies, total, 'one copy of each record');
        }),

      () =>
        t.test('naive twin: a producer without idempotence writes the unacknowledged records twice', async () => {
          const { copies } = await lostAck(broker, 'ack-twin', { 'enable.idempotence': false });
          assert.ok(copies > total, `records written twice (${copies} copies of ${total})`);
        }),

      () =>
        t.test(
          'a consumer cut from the coordinator while it applies: fenced, taken over, once and in order',
          async (t) => {
            const { db, schema, insert, counts, outOfOrder, waitingOnLock } = await appliedTable(t);
            const topic = await broker.topic(1);
            const group = randomName('g');
            const proxy = broker.listeners.proxy('cut');
            let overlapped = false;
            let other: ReturnType<typeof createConsumer> | undefined;
            const member = (transport: Transport, cut: boolean) =>
              createConsumer({
                db,
                transport,
                group,
                topics: [topic],
                schema,
                logger: silentLogger,
                maxBatchSize: 30,
                sessionTimeoutMs: 6000,
                handler: async (event, { tx }) => {
                  if (cut && (event.data as { n: number }).n === 50 && !other) {
                    proxy.silence(); // cut from the broker, the group coordinator with it; PostgreSQL still answers
                    other = member(broker.direct, false);
                    void other.start();
                    // Applying on, until the other member has the partition and its claim waits for this transaction.
                    const until = Date.now() + 25_000;
                    while (!overlapped && Date.now() < until) {
                      overlapped = await waitingOnLock();
                      if (!overlapped) await sleep(100);
                    }
                  }
                  await insert(tx, event);
                },
              });
            const cutMember = member(broker.through('cut'), true);
            t.after(async () => {
              // The network back and the silent connections cut: the cut member's last commit is answered (refused: it
              // was fenced) and its client finishes closing instead of keeping the process alive.
              proxy.heal();
              proxy.reset();
              await other?.close();
              await cutMember.close();
            });
            await cutMember.start();
            await produce(keyedEvents(topic, total));
            await eventually(async () => (await counts()).distinct === total, 40_000, 'every event applied');
            await sleep(500);
            assert.ok(overlapped, 'the other member fetched the cut member’s batch while it was being applied');
            assert.deepEqual(await counts(), { total, distinct: total }, 'every event applied once');
            assert.deepEqual(await outOfOrder(), [], 'order per key kept');
          },
        ),

      () =>
        t.test('naive twin: the same cut without dedup rows applies the batch twice', async (t) => {
          const { db, insert, counts } = await appliedTable(t);
          const topic = await broker.topic(1);
          const group = randomName('naive');
          const proxy = broker.listeners.proxy('cut-twin');
          let otherApplied = false;
          let other: ReturnType<Transport['consumer']> | undefined;
          const member = (transport: Transport, cut: boolean) => {
            const consumer = transport.consumer({
              group,
              topics: [topic],
              maxBatchSize: 30,
              sessionTimeoutMs: 6000,
              fromBeginning: true,
            });
            void consumer.run(async (batch, control) => {
              await db.transaction(async (tx) => {
                for (const record of batch.records) {
                  const event = JSON.parse(record.value!.toString()) as { n: number };
                  if (cut && event.n === 50 && !other) {
                    proxy.silence();
                    other = member(broker.direct, false);
                    const until = Date.now() + 25_000;
                    while (!otherApplied && Date.now() < until) await sleep(100);
                  }
                  await insert(tx, {
                    id: record.headers.ce_id!.toString(),
                    key: record.key!.toString(),
                    data: event,
                  } as Event);
                }
              });
              if (!cut) otherApplied = true;
              control.resolve(batch.records.at(-1)!.offset);
              await consumer.commit([positionAfter(batch.records.at(-1)!)]);
            });
            return consumer;
          };
          const cutMember = member(broker.through('cut-twin'), true);
          t.after(async () => {
            // The network back and the silent connections cut: the cut member's last commit is answered (refused: it
            // was fenced) and its client finishes closing instead of keeping the process alive.
            proxy.heal();
            proxy.reset();
            await other?.close();
            await cutMember.close();
          });
          await produce(keyedEvents(topic, total));
          await eventually(async () => (await counts()).distinct === total, 40_000, 'every event applied');
          await sleep(500);
          const { total: rows } = await counts();
          assert.ok(rows > total, `the cut member's batch applied twice (${rows - total} rows too many)`);
        }),
    ].map((run) => run()),
  );
});
