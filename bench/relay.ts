// relay: throughput at saturation, and end-to-end latency from the writer's commit to the consumer's committed effect.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createConsumer } from '../src/consumer/consumer.ts';
import type { Db } from '../src/db/port.ts';
import type { ContentModes } from '../src/envelope/cloudevents.ts';
import type { Event } from '../src/envelope/event.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { createOutbox } from '../src/outbox/outbox.ts';
import { createRelay, type RelayOptions } from '../src/outbox/relay.ts';
import type { Transport } from '../src/transport/port.ts';
import { benchEvent, offerAtRate, percentile, round, until } from './support.ts';

/** Fills the outbox with `events` rows from 4 concurrent writers, 500 per transaction (binary content mode unless `modes`). */
export async function fillOutbox(
  db: Db,
  schema: string,
  topic: string,
  events: number,
  modes?: ContentModes,
): Promise<void> {
  const outbox = createOutbox({ schema, notify: false, ...(modes ? { modes } : {}) });
  const writers = 4;
  const perTransaction = 500;
  let next = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < events) {
        const from = next;
        next += perTransaction;
        const batch: Event[] = [];
        for (let n = from; n < Math.min(from + perTransaction, events); n++) batch.push(benchEvent(topic, n));
        await db.transaction((tx) => outbox.enqueue(tx, batch));
      }
    }),
  );
}

/** Fills the outbox with `events` rows from `writers` concurrent writers, then times one relay draining it. */
export async function relaySaturation(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  events: number,
  extra: Partial<RelayOptions> = {},
  modes?: ContentModes,
) {
  await fillOutbox(db, schema, topic, events, modes);
  let published = 0;
  const first = transport.producer();
  await first.connect(); // connection set-up is not throughput
  let made = 0;
  const relay = createRelay({
    db,
    // The first producer is the one connected above; a producer that fails fatally is replaced by a new one.
    producerFactory: () => (made++ === 0 ? first : transport.producer()),
    schema,
    batchSize: 1000,
    logger: silentLogger,
    ...extra,
    onPublished: (count) => {
      published += count;
    },
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  await relay.start();
  await until(() => published >= events, 600_000, 'the relay to drain');
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await relay.close();
  // The process's CPU (all its threads: the client's too) per event published: steadier than events/s on a busy machine.
  const cpuUsPerEvent = round((used.user + used.system) / published);
  return {
    events: published,
    seconds: round(seconds),
    eps: Math.round(published / seconds),
    cpu_us_per_event: cpuUsPerEvent,
  };
}

/** When each event's record was produced (its CreateTime: the relay's produce call) and handed to the consumer. */
interface Seen {
  producedAt: number;
  receivedAt: number;
}

/** The transport, its consumers noting each record's produce time and the wall time its batch reached the consumer. */
function observing(transport: Transport, seen: Map<string, Seen>): Transport {
  return {
    ...transport,
    consumer: (options) => {
      const consumer = transport.consumer(options);
      const run = consumer.run.bind(consumer);
      consumer.run = (handler) =>
        run((batch, control) => {
          const receivedAt = Date.now();
          for (const record of batch.records) {
            const id = record.headers.ce_id?.toString();
            if (id !== undefined && !seen.has(id)) seen.set(id, { producedAt: record.timestamp, receivedAt });
          }
          return handler(batch, control);
        });
      return consumer;
    },
  };
}

const p99 = (values: number[]) =>
  round(
    percentile(
      [...values].sort((a, b) => a - b),
      99,
    ),
  );

/**
 * Writers commit `rate` events/s for `seconds`; latency = consumer's committed effect - writer's commit. The consumer
 * applies the topic's `partitions` at once. Each event's path is split in three hops by wall clock: commit → produced
 * (the record's CreateTime, set at the relay's produce call), produced → received (the batch reaches the consumer),
 * received → applied (the consumer's transaction committed); `hops_p99_ms` is their p99s, `loop_delay_p99_ms` the
 * event loop's stalls meanwhile (writer, relay and consumer share this process). The first `warmSeconds` at the same
 * rate are not counted.
 */
export async function endToEnd(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  group: string,
  rate: number,
  seconds: number,
  partitions: number,
  relayOptions: { pollIntervalMs?: number; listen?: boolean } = {},
  warmSeconds = 2,
) {
  const outbox = createOutbox({ schema });
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const seen = new Map<string, Seen>();
  const wallCommittedAt = new Map<string, number>();
  const hops: [number[], number[], number[]] = [[], [], []];
  const consumer = createConsumer({
    db,
    transport: observing(transport, seen),
    group,
    topics: [topic],
    schema,
    maxBatchSize: 500,
    logger: silentLogger,
    retention: false,
    // One batch per partition at once: a record does not wait behind the other partitions' batches (needs a
    // connection per partition in the pool).
    concurrency: { partitions },
    batchHandler: async () => undefined,
    onOutcome: (event) => {
      // Once per event: a redelivered copy (after a rebalance) must not stand in for an event that never arrived.
      const at = committedAt.get(event.id);
      if (at === undefined) return;
      committedAt.delete(event.id);
      latencies.push(performance.now() - at);
      const wall = wallCommittedAt.get(event.id);
      const path = seen.get(event.id);
      if (wall !== undefined && path !== undefined) {
        const appliedAt = Date.now();
        hops[0].push(path.producedAt - wall);
        hops[1].push(path.receivedAt - path.producedAt);
        hops[2].push(appliedAt - path.receivedAt);
      }
    },
  });
  const relay = createRelay({
    db,
    producerFactory: () => transport.producer(),
    schema,
    logger: silentLogger,
    ...relayOptions,
  });
  await consumer.start();
  await relay.start();
  /** Writers commit `total` events at `rate` from event number `from` on; each commit time is noted per event. */
  const offer = (from: number, total: number) =>
    offerAtRate(topic, rate, total, from, async (batch) => {
      await db.transaction((tx) => outbox.enqueue(tx, batch));
      const now = performance.now();
      const wall = Date.now();
      for (const event of batch) {
        committedAt.set(event.id, now);
        wallCommittedAt.set(event.id, wall);
      }
    });
  // Warm up at the same rate, then forget what it measured: the group is joined, every hop has carried events, the
  // code on the path is compiled and a broker started a moment ago has settled before the clock starts (a first run
  // right after the broker's start gave p99 181 ms, the next ones 23-28 ms).
  const warmEvents = Math.round(rate * warmSeconds);
  await offer(-warmEvents, Math.max(1, warmEvents));
  await until(() => latencies.length >= Math.max(1, warmEvents), 60_000, 'the warm-up events');
  latencies.length = 0;
  for (const hop of hops) hop.length = 0;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const total = Math.round(rate * seconds);
  await offer(0, total);
  await until(() => latencies.length >= total, 120_000, 'every event end to end');
  loopDelay.disable();
  await relay.close();
  await consumer.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    events: total,
    offered_eps: rate,
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    p99_ms: round(percentile(sorted, 99)),
    hops_p99_ms: hops.map(p99),
    loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
  };
}
