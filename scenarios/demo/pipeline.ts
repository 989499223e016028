// One run of the boxoffice story through crashes: an order service, (for effectively) the outbox relay, and the
// notification consumer, in this process. A crashed component is dropped and a new one started.
import { createConsumer, type EffectivelyConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import type { FaultInjector } from '../../src/observability/faults.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay, type Relay } from '../../src/outbox/relay.ts';
import type { Consumer, Transport } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { auditStory } from '../boxoffice/audit.ts';
import { lastOrderNo, newOrders, saveOrders, scheduleEmail } from '../boxoffice/orders.ts';
import { Crash, Crasher } from './crasher.ts';

export type Pipeline = 'naive' | 'effectively';

export interface PipelineResult {
  orders: number;
  emails: number;
  duplicates: number;
  missing: number;
  crashes: string[];
}

export interface PipelineOptions {
  pipeline: Pipeline;
  db: Db;
  transport: Transport;
  schema: string;
  orders: number;
  /** Crash points, spread evenly over the run. */
  crashes: string[];
  onProgress?: (emails: number) => void;
}

const chunk = 10;

export async function runPipeline(options: PipelineOptions): Promise<PipelineResult> {
  const { db, transport, schema, pipeline } = options;
  const topic = `${schema.replaceAll('_', '-')}-orders`;
  const group = `${schema}-notifications`;
  await migrate(db, { schema });
  await db.query(loadSql(import.meta.url, '../boxoffice/schema.sql', schema));
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 3 }]);
  const crasher = new Crasher();
  const faults = crasher.at as FaultInjector;
  const outbox = createOutbox({ schema, notify: false });
  const producer = transport.producer();

  // Crash k is armed just before the order service places the orders past k/(n+1) of the run, so every component still
  // has those orders ahead of it and reaches the armed hop; one crash is armed at a time.
  const schedule = options.crashes.filter((point) => !(pipeline === 'naive' && point.startsWith('relay')));
  let nextCrash = 0;
  async function armDueCrashes(placed: number): Promise<void> {
    while (nextCrash < schedule.length && placed >= ((nextCrash + 1) / (schedule.length + 1)) * options.orders) {
      while (crasher.armed) await sleep(5);
      crasher.arm(schedule[nextCrash++]!);
    }
  }

  /** The order service: saves orders (with their events in the outbox, for effectively) until all are placed. */
  async function writer(): Promise<void> {
    for (let next = (await lastOrderNo(db, schema)) + 1; next <= options.orders; next += chunk) {
      await armDueCrashes(next - 1);
      const orders = newOrders(topic, next, Math.min(next + chunk - 1, options.orders));
      await db.transaction(async (tx) => {
        await saveOrders(tx, schema, orders);
        if (pipeline === 'effectively')
          await outbox.enqueue(
            tx,
            orders.map((order) => order.event),
          );
      });
      crasher.at('writer:after-save');
      if (pipeline === 'naive') await producer.send(orders.map((order) => encodeEvent(order.event)));
    }
  }

  function startRelay(): Relay {
    // Each relay owns its producers (it closes them, and replaces one that failed fatally).
    const relay = createRelay({
      db,
      producerFactory: () => transport.producer(),
      schema,
      pollIntervalMs: 20,
      errorBackoffMs: 50,
      logger: silentLogger,
      faults,
    });
    void relay.start();
    return relay;
  }

  async function startConsumer(): Promise<{ close(): Promise<void> }> {
    if (pipeline === 'effectively') {
      const consumer: EffectivelyConsumer = createConsumer({
        db,
        transport,
        group,
        topics: [topic],
        schema,
        maxBatchSize: 100,
        sessionTimeoutMs: 6000,
        logger: silentLogger,
        // The demo keeps the separate offset commit, to show the dedup rows absorbing the redelivery after a crash
        // between the two commits (with the log in this database the default commits both at once).
        offsetsInTransaction: false,
        faults,
        handler: async (event, { tx }) => {
          await scheduleEmail(tx, schema, event);
        },
      });
      await consumer.start();
      return consumer;
    }
    // naive: e-mail first, offset after, no dedup row: a crash between the two sends the e-mail again
    const consumer: Consumer = transport.consumer({
      group,
      topics: [topic],
      maxBatchSize: 100,
      fromBeginning: true,
      sessionTimeoutMs: 6000,
    });
    await consumer.run(async (batch, control) => {
      await db.transaction(async (tx) => {
        for (const record of batch.records) await scheduleEmail(tx, schema, decodeEvent(record));
      });
      crasher.at('consumer:after-db-commit');
      const last = batch.records.at(-1)!;
      await consumer.commit([positionAfter(last)]);
      control.resolve(last.offset);
    });
    return consumer;
  }

  const measure = async () => {
    const { orders, emails, lost, duplicated } = await auditStory(db, schema);
    return { orders, emails, missing: lost, duplicates: duplicated };
  };

  let writerRun: Promise<void> = writer();
  let writerDone = false;
  let relay = pipeline === 'effectively' ? startRelay() : undefined;
  let consumer = await startConsumer();
  const crashes: string[] = [];
  let idleSince = Date.now();
  let lastEmails = -1;
  try {
    for (;;) {
      const writerState = await Promise.race([
        writerRun.then(
          () => 'done' as const,
          (error: unknown) => (error instanceof Crash ? ('crashed' as const) : Promise.reject(error)),
        ),
        sleep(30).then(() => 'running' as const),
      ]);
      if (writerState === 'done') writerDone = true;
      for (const point of crasher.took()) {
        crashes.push(point);
        if (point.startsWith('relay')) {
          void relay?.close();
          relay = startRelay();
        } else if (point.startsWith('consumer')) {
          void consumer.close();
          consumer = await startConsumer();
        }
      }
      if (writerState === 'crashed') writerRun = writer();
      const now = await measure();
      options.onProgress?.(now.emails);
      if (now.emails !== lastEmails) {
        lastEmails = now.emails;
        idleSince = Date.now();
      }
      const complete = writerDone && now.missing === 0 && !crasher.armed;
      if (complete || (writerDone && Date.now() - idleSince > 3000)) break;
    }
    await sleep(300);
    return { ...(await measure()), crashes };
  } finally {
    await relay?.close();
    await consumer.close();
    await producer.close();
    await admin.close();
  }
}
