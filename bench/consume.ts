// consume: raw client vs one transaction per record (the seeds' shape) vs effectively's batch mode, same events.
import { createConsumer } from '../src/consumer/consumer.ts';
import type { Concurrency } from '../src/consumer/lanes.ts';
import type { Db } from '../src/db/port.ts';
import { loadSql } from '../src/db/sql.ts';
import { decodeEvent } from '../src/envelope/cloudevents.ts';
import type { Event } from '../src/envelope/event.ts';
import { silentLogger } from '../src/observability/logger.ts';
import type { Transport } from '../src/transport/port.ts';
import { positionAfter } from '../src/transport/position.ts';
import { clock, type Run, rssSampler, until } from './support.ts';

const insertEffect = (schema: string) =>
  `INSERT INTO ${schema}.bench_effects (event_id, order_no, amount) VALUES ($1, $2, $3)`;
const insertEffects = (schema: string) =>
  `INSERT INTO ${schema}.bench_effects (event_id, order_no, amount)
   SELECT unnest($1::uuid[]), unnest($2::int[]), unnest($3::int[])`;

type Order = { orderNo: number; amount: number };

/**
 * (a) the project's transport alone: no processing, each batch's position committed after it the way the consumer
 * commits (noted, not awaited: the broker's answer comes off the batch's path).
 */
export async function consumeRaw(transport: Transport, topic: string, events: number, group: string): Promise<Run> {
  const timer = clock(events);
  const consumer = transport.consumer({ group, topics: [topic], maxBatchSize: 1000, fromBeginning: true });
  await consumer.run(async (batch, control) => {
    const last = batch.records.at(-1)!;
    consumer.commit([positionAfter(last)]).catch(() => undefined);
    control.resolve(last.offset);
    timer.add(batch.records.length);
  });
  await until(() => timer.done, 600_000, 'raw consume');
  await consumer.close();
  return timer.result();
}

/** (b) the seeds' shape: per record one transaction with the dedup insert and the effect, offsets after the batch. */
export async function consumePerRecord(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  events: number,
  group: string,
): Promise<Run> {
  const timer = clock(events);
  const dedup = `INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
  const effect = insertEffect(schema);
  const consumer = transport.consumer({ group, topics: [topic], maxBatchSize: 1000, fromBeginning: true });
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) {
      if (timer.done) break;
      const event = decodeEvent(record);
      const order = event.data as Order;
      await db.transaction(async (tx) => {
        const claimed = await tx.query(dedup, [group, event.id]);
        if ((claimed.rowCount ?? 0) > 0) await tx.query(effect, [event.id, order.orderNo, order.amount]);
      });
      timer.add(1);
    }
    const last = batch.records.at(-1)!;
    consumer.commit([positionAfter(last)]).catch(() => undefined);
    control.resolve(last.offset);
  });
  await until(() => timer.done, 900_000, 'per-record consume');
  await consumer.close();
  return timer.result();
}

/** (c) effectively: bulk dedup + the effects in one multi-row insert, one transaction per batch, offsets after. */
export async function consumeBatch(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  events: number,
  group: string,
  maxBatchSize = 1000,
  concurrency?: Concurrency,
): Promise<Run & { rss: { start: number; peak: number; end: number } }> {
  const timer = clock(events);
  const rss = rssSampler();
  const effects = insertEffects(schema);
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    maxBatchSize,
    ...(concurrency ? { concurrency } : {}),
    logger: silentLogger,
    batchHandler: async (fresh: Event[], { tx }) => {
      const orders = fresh.map((event) => event.data as Order);
      await tx.query(effects, [
        fresh.map((event) => event.id),
        orders.map((order) => order.orderNo),
        orders.map((order) => order.amount),
      ]);
    },
    onOutcome: () => timer.add(1),
  });
  await consumer.start();
  await until(() => timer.done, 900_000, 'batch consume');
  await consumer.close();
  return { ...timer.result(), rss: rss.stop() };
}

export async function createEffectsTable(db: Db, schema: string): Promise<void> {
  await db.query(loadSql(import.meta.url, 'effects.sql', schema));
}
