// Child process: the notification consumer. Schedules one e-mail row per OrderConfirmed. The naive twin (`no-dedup`)
// writes the e-mail and then commits the offset, with no dedup row: a crash between the two is Ana's second e-mail.
// The naive twin `offset-first` commits the offset and then writes: a crash between the two loses the e-mail.
import { createConsumer } from '../../src/consumer/consumer.ts';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { type OrderConfirmed, scheduleEmail } from '../boxoffice/orders.ts';
import { configFromEnv } from './config.ts';
import { announce, announceReady, crashSwitch, firstApplied } from './crash.ts';
import { chaosDb } from './db.ts';
import { untilUp } from './retry.ts';
import { chaosTransport } from './transport.ts';

announce('loaded');
const config = configFromEnv();
const crash = crashSwitch();
const applied = firstApplied();
const db = chaosDb();
const transport = chaosTransport(config, 'chaos-consumer');
const membership = { instanceId: 'chaos-consumer', sessionTimeoutMs: 6000 };

if (config.mode === 'no-dedup' || config.mode === 'offset-first') {
  const consumer = transport.consumer({
    group: config.group,
    topics: [config.topic],
    maxBatchSize: 200,
    fromBeginning: true,
    ...membership,
  });
  await consumer.run(async (batch, control) => {
    const events = batch.records.map(decodeEvent);
    const last = batch.records.at(-1)!;
    const commitOffset = () => consumer.commit([positionAfter(last)]);
    if (config.mode === 'offset-first') await commitOffset();
    await db.transaction(async (tx) => {
      for (const event of events) await scheduleEmail(tx, config.schema, event);
      crash('consumer:before-db-commit');
    });
    applied();
    crash('consumer:after-db-commit');
    if (config.mode === 'no-dedup') await commitOffset();
    control.resolve(last.offset);
  });
  process.on('SIGTERM', () => void consumer.close().then(() => process.exit(0)));
  announceReady();
} else {
  // A start refused by an outage (57P03 while PostgreSQL shuts down, the broker down) is tried again with a new consumer.
  const consumer = await untilUp(
    async () => {
      const consumer = createConsumer({
        db,
        transport,
        group: config.group,
        topics: [config.topic],
        schema: config.schema,
        maxBatchSize: 200,
        retention: false, // the auditor reads every dedup row: nothing is purged during a run
        ...(config.concurrent > 0 ? { concurrency: { mode: 'key', max: 8, partitions: config.concurrent } } : {}),
        ...membership,
        faults: (point) => {
          if (point === 'consumer:after-db-commit') applied();
          crash(point);
        },
        // One statement per batch, as a team after throughput writes it: one INSERT per event capped this consumer
        // at about 800 events/s on this machine (a million-event run then takes over 20 minutes of consuming).
        batchHandler: async (events, { tx }) => {
          await tx.query(
            `INSERT INTO ${config.schema}.emails (order_id, event_id) SELECT unnest($1::uuid[]), unnest($2::uuid[])`,
            [events.map((event) => (event.data as OrderConfirmed).orderId), events.map((event) => event.id)],
          );
        },
      });
      try {
        await consumer.start();
        return consumer;
      } catch (error) {
        await consumer.close().catch(() => undefined);
        throw error;
      }
    },
    { what: 'consumer start', retryAll: true, log: (line) => console.error(line) },
  );
  process.on('SIGTERM', () => void consumer.close().then(() => process.exit(0)));
  announceReady();
}
