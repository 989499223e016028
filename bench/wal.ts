// wal: the relay that reads the write-ahead log (`source: 'wal'`) against the poller, both on the project's private
// cluster (logical decoding; the machine's shared server has none): throughput at saturation (the library's default
// binary content mode, 7 headers a record, and the structured mode, 1), and the latency from the writer's commit to the
// broker's acknowledgement at 1,000 events/s, split at the relay's send (commit -> send called, send -> acknowledged).

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startPrivatePostgres } from '../scenarios/chaos/private-postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { pgDb } from '../src/db/pg.ts';
import type { Db } from '../src/db/port.ts';
import { encodeEventAs } from '../src/envelope/cloudevents.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { sleep } from '../src/observability/sleep.ts';
import { createOutbox } from '../src/outbox/outbox.ts';
import { createRelay } from '../src/outbox/relay.ts';
import type { WalOptions } from '../src/outbox/relay-options.ts';
import { dropWalSlot, walNames } from '../src/outbox/wal/slot.ts';
import type { Admin, OutgoingRecord, Producer, Transport } from '../src/transport/port.ts';
import { relaySaturation } from './relay.ts';
import { benchEvent, offerAtRate, percentile, round, until } from './support.ts';

export async function walBench(transport: Transport, admin: Admin, id: string, events: number, seconds: number) {
  const cluster = await startPrivatePostgres();
  const db = pgDb({ connectionString: cluster.url, max: 10 });
  const schema = `bench_wal_${id}`;
  const wal: WalOptions = { connectionString: cluster.url };
  const topics = {
    wal: `bench-wal-${id}`,
    structured: `bench-wal-structured-${id}`,
    producer: `bench-wal-producer-${id}`,
    poll: `bench-wal-poll-${id}`,
    latency: `bench-wal-latency-${id}`,
  };
  try {
    await migrate(db, { schema });
    for (const topic of Object.values(topics)) await admin.createTopics([{ topic, partitions: 6 }]);
    // The slot first: the rows then come through the stream (not the new slot's catch-up from the table).
    const first = createRelay({ db, schema, source: 'wal', wal, producerFactory: () => transport.producer() });
    await first.start();
    await slotReady(db, schema);
    await first.close();
    // Latency first, on the fresh cluster (as the end-to-end phase): after the saturation runs' 300,000 inserts and
    // deletes, autovacuum and a checkpoint (max_wal_size 512 MB) land in the 1,000 events/s run and its commits.
    const latency = await walLatency(db, transport, schema, topics.latency, wal, seconds);
    const walRun = await relaySaturation(db, transport, schema, topics.wal, events, { source: 'wal', wal });
    const structured = await relaySaturation(
      db,
      transport,
      schema,
      topics.structured,
      events,
      { source: 'wal', wal },
      () => 'structured',
    );
    const pollRun = await relaySaturation(db, transport, schema, topics.poll, events);
    const producerOnly = await producerCeiling(transport, topics.producer, events);
    return {
      wal: walRun,
      wal_structured: structured,
      poll_same_cluster: pollRun,
      wal_vs_poll: round(walRun.eps / pollRun.eps),
      producer_only: producerOnly,
      latency,
    };
  } finally {
    await dropWalSlot(db, { schema }).catch(() => undefined);
    await db.query(`DROP PUBLICATION IF EXISTS ${walNames(schema).publication}`).catch(() => undefined);
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
    await db.close();
    if (cluster.startedHere) await cluster.stop();
  }
}

/** The relay's ceiling: the same records (binary mode, encoded beforehand) through the project's producer alone. */
async function producerCeiling(transport: Transport, topic: string, events: number) {
  const records = Array.from({ length: events }, (_, n) => encodeEventAs(benchEvent(topic, n), 'binary'));
  const producer = transport.producer();
  await producer.connect();
  try {
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (let from = 0; from < events; from += 1000) await producer.send(records.slice(from, from + 1000));
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    return { eps: Math.round(events / seconds), cpu_us_per_event: round((used.user + used.system) / events) };
  } finally {
    await producer.close();
  }
}

async function slotReady(db: Db, schema: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { rows } = await db.query(`SELECT 1 FROM ${schema}.settings WHERE name LIKE 'wal.slot.%'`);
    if (rows.length > 0) return;
    await sleep(50);
  }
  throw new Error('bench: the WAL relay made no slot');
}

/**
 * Writers commit 1,000 events/s (10 per 10 ms); latency = the broker's acknowledgement of the event - the moment its
 * transaction's COMMIT was sent.
 */
async function walLatency(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  wal: WalOptions,
  seconds: number,
) {
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const commits: number[] = [];
  // The two hops: commit -> the relay's send called (PostgreSQL's decoding and the relay), send -> acknowledged.
  const hops: [number[], number[]] = [[], []];
  const acknowledged = (records: readonly OutgoingRecord[], sentAt: number) => {
    const now = performance.now();
    for (const record of records) {
      const at = committedAt.get(String(record.headers.ce_id));
      if (at === undefined) continue;
      committedAt.delete(String(record.headers.ce_id));
      latencies.push(now - at);
      hops[0].push(sentAt - at);
      hops[1].push(now - sentAt);
    }
  };
  const timed = (): Producer => {
    const real = transport.producer();
    return {
      connect: () => real.connect(),
      close: () => real.close(),
      async send(records) {
        const sentAt = performance.now();
        await real.send(records);
        acknowledged(records, sentAt);
      },
    };
  };
  const outbox = createOutbox({ schema, notify: false });
  const relay = createRelay({ db, schema, source: 'wal', wal, producerFactory: timed, logger: silentLogger });
  await relay.start();
  const warm = benchEvent(topic, -1);
  committedAt.set(warm.id, performance.now());
  await db.transaction((tx) => outbox.enqueue(tx, warm));
  await until(() => latencies.length > 0, 60_000, 'the warm-up event');
  latencies.length = 0;
  for (const hop of hops) hop.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const rate = 1000;
  const total = rate * seconds;
  await offerAtRate(topic, rate, total, 0, async (batch) => {
    // The clock starts as COMMIT is sent: the relay can acknowledge an event before the writer's await resumes.
    let commitSent = 0;
    await db.transaction(async (tx) => {
      await outbox.enqueue(tx, batch);
      commitSent = performance.now();
      for (const event of batch) committedAt.set(event.id, commitSent);
    });
    // The writer's own COMMIT round trip (the server's flush): the relay cannot see a transaction before it.
    commits.push(performance.now() - commitSent);
  });
  await until(() => latencies.length >= total, 120_000, 'every event acknowledged');
  loop.disable();
  await relay.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = (values: number[]) =>
    round(
      percentile(
        [...values].sort((a, b) => a - b),
        99,
      ),
    );
  return {
    events: total,
    offered_eps: rate,
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    p99_ms: round(percentile(sorted, 99)),
    hops_p99_ms: hops.map(p99),
    commit_p99_ms: p99(commits),
    // This process's event loop meanwhile (the writers, the relay and the client share it): its stalls are in every hop.
    loop_delay_p99_ms: round(loop.percentile(99) / 1e6),
    loop_delay_max_ms: round(loop.max / 1e6),
  };
}
