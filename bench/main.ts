// npm run bench [-- --quick] [--events N] [--memory-events N] [--phases relay,consume,memory,parallel,dedup,eos,embedded,wal]
// What effectively-once costs: consume (the Confluent client alone vs the project's raw transport vs per-record vs
// batch) on Kafka + PostgreSQL, relay throughput and end-to-end latency, consumer memory over a long run, dedup cost
// as processed_events grows, and the embedded transport. Writes bench/results/<time>.json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { pgDb } from '../src/db/pg.ts';
import { pgliteDb } from '../src/db/pglite.ts';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import { platformaticTransport } from '../src/transport/platformatic/transport.ts';
import { postgresTransport } from '../src/transport/postgres/transport.ts';
import { consumeClientRaw } from './client-raw.ts';
import { consumeBatch, consumePerRecord, consumeRaw, createEffectsTable } from './consume.ts';
import { dedupGrowth } from './dedup.ts';
import { measureEosVsAlo } from './eos.ts';
import { measureEosLatency } from './eos-latency.ts';
import { memoryRuns } from './memory.ts';
import { keyParallelSpeedup, lanes } from './parallel.ts';
import { endToEnd, relaySaturation } from './relay.ts';
import { preload, round } from './support.ts';
import { walBench } from './wal.ts';

const allPhases = 'relay,consume,memory,parallel,dedup,eos,embedded,wal';
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    events: { type: 'string' },
    'memory-events': { type: 'string' },
    phases: { type: 'string', default: allPhases },
  },
});
const phases = new Set(values.phases.split(','));
const partial = values.phases !== allPhases;
const quick = values.quick;
const events = Number(values.events ?? (quick ? 5000 : 200_000));
const perRecordEvents = Math.min(events, quick ? 1000 : 20_000);
const memoryEvents = Number(values['memory-events'] ?? (quick ? 5000 : 1_000_000));
const relayEvents = quick ? 5000 : 100_000;
const e2eSeconds = quick ? 1 : 10;
const embeddedEvents = quick ? 2000 : 50_000;
const dedupRows = quick ? [20_000, 200_000] : [1_000_000, 10_000_000];
const id = Date.now().toString(36);
const log = (line: string) => console.log(`bench: ${line}`);
/** Between phases: let PostgreSQL's autovacuum and the broker's background work from the last phase pass. */
const settle = () => new Promise((resolve) => setTimeout(resolve, quick ? 500 : 5000));

try {
  execFileSync('bash', [fileURLToPath(new URL('../scripts/kafka.sh', import.meta.url)), 'start'], { stdio: 'inherit' });
} catch {
  throw new Error('bench: the Kafka broker could not be started (scripts/kafka.sh start)');
}

const db = pgDb({ max: 10 }); // the end-to-end run's consumer takes one connection per partition (6)
const schema = `bench_${id}`;
await migrate(db, { schema });
await createEffectsTable(db, schema);
const transport = kafkaTransport({ clientId: 'bench' });
const admin = transport.admin();
const topic = (name: string) => `bench-${name}-${id}`;
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  cores: cpus().length,
  cpu: cpus()[0]?.model,
  node: process.version,
  quick,
  phases: [...phases],
};

try {
  // 1. end-to-end latency first, on a quiet machine and fresh tables (the relay's 100,000 outbox rows inserted and
  // deleted leave dead tuples the next relay passes would scan until autovacuum), then the relay at saturation
  if (phases.has('relay')) {
    const e2eTopic = topic('e2e');
    await admin.createTopics([{ topic: e2eTopic, partitions: 6 }]);
    const e2e = await endToEnd(db, transport, schema, e2eTopic, `e2e-${id}`, 1000, e2eSeconds, 6, {}, quick ? 0.5 : 2);
    log(`end to end at 1000 events/s: p50 ${e2e.p50_ms} ms, p95 ${e2e.p95_ms} ms, p99 ${e2e.p99_ms} ms`);
    log(`end to end p99 by hop (commit→produced/produced→received/received→applied): ${e2e.hops_p99_ms.join('/')} ms`);
    log(`event loop delay p99 meanwhile: ${e2e.loop_delay_p99_ms} ms`);
    const relayTopic = topic('relay');
    await admin.createTopics([{ topic: relayTopic, partitions: 6 }]);
    const relay = await relaySaturation(db, transport, schema, relayTopic, relayEvents);
    log(`relay at saturation: ${relay.eps} events/s`);
    results.relay = relay;
    results.e2e = e2e;
    await admin.deleteTopics([relayTopic, e2eTopic]).catch(() => undefined);
    await settle();
  }

  // 1b. the relay on the write-ahead log, against the poller on the same (private) cluster
  if (phases.has('wal')) {
    const wal = await walBench(transport, admin, id, relayEvents, e2eSeconds);
    log(
      `wal relay at saturation: ${wal.wal.eps} events/s, ${wal.wal.cpu_us_per_event} us of CPU an event ` +
        `(structured mode ${wal.wal_structured.eps} events/s, ${wal.wal_structured.cpu_us_per_event} us; poller on ` +
        `the same cluster ${wal.poll_same_cluster.eps}; the producer alone ${wal.producer_only.eps}, ` +
        `${wal.producer_only.cpu_us_per_event} us); commit to broker ack at 1000 events/s: p50 ` +
        `${wal.latency.p50_ms} ms, p99 ${wal.latency.p99_ms} ms (commit -> send ${wal.latency.hops_p99_ms[0]}, ` +
        `the writer's own commit ${wal.latency.commit_p99_ms}, ` +
        `send -> ack ${wal.latency.hops_p99_ms[1]}; event loop delay p99 ${wal.latency.loop_delay_p99_ms} ms, max ` +
        `${wal.latency.loop_delay_max_ms})`,
    );
    results.wal = wal;
    await settle();
  }

  // 2. consume
  if (phases.has('consume')) {
    const consumeTopic = topic('consume');
    // The same events in the structured content mode (one header instead of the binary mode's ce_* headers): the
    // raw read of both is what the headers cost on this client (headers_vs_plain).
    const structuredTopic = topic('consume-structured');
    await admin.createTopics([
      { topic: consumeTopic, partitions: 6 },
      { topic: structuredTopic, partitions: 6 },
    ]);
    log(`preloading ${events} events of ~1 KB into 6 partitions, binary mode and structured mode`);
    const producer = transport.producer();
    await preload(producer, consumeTopic, events);
    await preload(producer, structuredTopic, events, 'structured');
    await producer.close();
    // The client alone first and the transport right after, on the same topic: their ratio is the transport's cost.
    const clientRaw = await consumeClientRaw(consumeTopic, events, `client-raw-${id}`);
    log(`consume client_raw (the Confluent client alone, eachBatch, auto-commit): ${clientRaw.eps} events/s`);
    const raw = await consumeRaw(transport, consumeTopic, events, `raw-${id}`);
    log(`consume raw (the project's transport, binary mode): ${raw.eps} events/s`);
    const rawStructured = await consumeRaw(transport, structuredTopic, events, `raw-structured-${id}`);
    log(`consume raw (the project's transport, structured mode): ${rawStructured.eps} events/s`);
    // The same two reads on the second Kafka transport (the pure-JavaScript client): what the binary mode's headers
    // cost where no native binding converts them (pjs_headers_vs_plain), and its binary-mode read against the first's.
    const pjs = platformaticTransport({ clientId: 'bench' });
    const pjsRaw = await consumeRaw(pjs, consumeTopic, events, `pjs-raw-${id}`);
    log(`consume raw (the pure-JavaScript Kafka transport, binary mode): ${pjsRaw.eps} events/s`);
    const pjsRawStructured = await consumeRaw(pjs, structuredTopic, events, `pjs-raw-structured-${id}`);
    log(`consume raw (the pure-JavaScript Kafka transport, structured mode): ${pjsRawStructured.eps} events/s`);
    const perRecord = await consumePerRecord(db, transport, schema, consumeTopic, perRecordEvents, `per-record-${id}`);
    log(`consume per-record (${perRecordEvents} events): ${perRecord.eps} events/s`);
    const batch = await consumeBatch(db, transport, schema, consumeTopic, events, `batch-${id}`);
    log(`consume effectively batch: ${batch.eps} events/s`);
    results.consume = {
      client_raw: clientRaw,
      raw,
      raw_structured: rawStructured,
      pjs_raw: pjsRaw,
      pjs_raw_structured: pjsRawStructured,
      per_record: perRecord,
      batch,
    };
    await admin.deleteTopics([consumeTopic, structuredTopic]).catch(() => undefined);
    await settle();
  }

  // 3. memory over a long run
  if (phases.has('memory')) {
    const memoryTopic = topic('memory');
    const producer = transport.producer();
    await admin.createTopics([{ topic: memoryTopic, partitions: 6 }]);
    log(`preloading ${memoryEvents} events for the memory run`);
    await preload(producer, memoryTopic, memoryEvents);
    await producer.close();
    const memorySchemas: string[] = [];
    const memory = await memoryRuns(
      { topic: memoryTopic, group: `memory-${id}`, events: memoryEvents },
      async (suffix) => {
        await settle();
        const runSchema = `${schema}_memory_${suffix}`;
        await migrate(db, { schema: runSchema });
        await createEffectsTable(db, runSchema);
        memorySchemas.push(runSchema);
        return runSchema;
      },
      log,
    );
    for (const [profile, run] of [
      ['default', memory.default],
      ['bounded', memory.bounded],
    ] as const) {
      log(
        `memory over ${memoryEvents} events (${profile}): rss start ${run.rss.start} MB, peak ${run.rss.peak} MB, end ${run.rss.end} MB, ${run.eps} events/s`,
      );
    }
    results.memory = memory;
    for (const each of memorySchemas) await db.query(`DROP SCHEMA ${each} CASCADE`).catch(() => undefined);
    await admin.deleteTopics([memoryTopic]).catch(() => undefined);
    await settle();
  }

  // 4. keys in parallel inside one partition: a 5 ms handler over 50 keys, mode 'key' vs 'partition'
  if (phases.has('parallel')) {
    const parallelTopic = topic('parallel');
    await admin.createTopics([{ topic: parallelTopic, partitions: 1 }]);
    const lanesDb = pgDb({ max: lanes + 2 });
    const parallel = await keyParallelSpeedup(lanesDb, transport, schema, parallelTopic, id).finally(() =>
      lanesDb.close(),
    );
    log(
      `parallel: keys=${parallel.keys} speedup=${parallel.speedup} (5 ms handler: partition ${parallel.partition.eps}/s, key ${parallel.key.eps}/s)`,
    );
    results.parallel = parallel;
    await admin.deleteTopics([parallelTopic]).catch(() => undefined);
  }

  // 5. dedup cost as processed_events grows (its own schema, so the row counts are exact)
  if (phases.has('dedup')) {
    const [small, large] = dedupRows as [number, number];
    log(`dedup: filling processed_events to ${small} and then ${large} rows`);
    // the bulk fill is one long statement (tens of seconds for 10M rows on a loaded host): no watchdog of the library's
    // (10 s) and no server-side statement timeout (60 s) on this phase's own pool
    const dedupDb = pgDb({ max: 2, libraryQueryTimeoutMs: 0, queryTimeoutMs: 0, statementTimeoutMs: 0 });
    const dedup = await dedupGrowth(dedupDb, `${schema}_dedup`, small, large).finally(async () => {
      await dedupDb.query(`DROP SCHEMA IF EXISTS ${schema}_dedup CASCADE`);
      await dedupDb.close();
    });
    log(`dedup claim of 1000 ids at ${small} / ${large} rows: ${dedup.claim_1000_ms.join(' / ')} ms (x${dedup.ratio})`);
    results.dedup = dedup;
  }

  // 6. Kafka→Kafka: the transactional pipeline vs the same pipeline at-least-once, same inputs, interleaved passes
  if (phases.has('eos')) {
    const eos = await measureEosVsAlo({ inputs: quick ? 10_000 : 150_000, rounds: quick ? 1 : 3 });
    log(
      `eos: exactly-once (commitIntervalMs ${eos.commitIntervalMs}) ${eos.exactlyOncePerSecond}/s, ` +
        `${eos.inputsPerTransaction} inputs a transaction, vs at-least-once ${eos.atLeastOncePerSecond}/s: ` +
        `eos_vs_alo=${eos.ratio}; windows of 100 ms ${eos.windowPerSecond}/s, ` +
        `${eos.windowInputsPerTransaction} a transaction: eos_window_vs_alo=${eos.windowRatio}`,
    );
    const latency = await measureEosLatency(1000, quick ? 1 : 5);
    const line = (side: keyof typeof latency) => JSON.stringify(latency[side]);
    log(
      `eos: a read_committed reader at ${latency.rate} inputs/s: at-least-once ${line('alo')}, exactly-once ` +
        `${line('eos')}, windows of 100 ms ${line('window')}`,
    );
    results.eos = { ...eos, readerLatency: latency };
  }
} finally {
  await admin.close();
  await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
  await db.close();
}

// 7. embedded: the same batch consume on PGlite with the postgres transport
if (phases.has('embedded')) {
  const embedded = await pgliteDb();
  const embeddedSchema = 'bench_embedded';
  await migrate(embedded, { schema: embeddedSchema });
  await createEffectsTable(embedded, embeddedSchema);
  const log2 = postgresTransport({ db: embedded, schema: embeddedSchema });
  const embeddedTopic = 'bench-embedded';
  await log2.admin().createTopics([{ topic: embeddedTopic, partitions: 6 }]);
  const producer = log2.producer();
  await preload(producer, embeddedTopic, embeddedEvents);
  const run = await consumeBatch(embedded, log2, embeddedSchema, embeddedTopic, embeddedEvents, 'embedded', 1000);
  log(`embedded (PGlite, postgres transport) batch consume: ${run.eps} events/s`);
  results.embedded = run;
  await embedded.close();
}

const consume = results.consume as
  | {
      client_raw: { eps: number };
      raw: { eps: number };
      raw_structured: { eps: number };
      pjs_raw: { eps: number };
      pjs_raw_structured: { eps: number };
      per_record: { eps: number };
      batch: { eps: number };
    }
  | undefined;
const summary = {
  batch_vs_raw: consume && round(consume.batch.eps / consume.raw.eps),
  batch_vs_per_record: consume && round(consume.batch.eps / consume.per_record.eps, 1),
  relay_eps: (results.relay as { eps: number } | undefined)?.eps,
  e2e_p99_ms: (results.e2e as { p99_ms: number } | undefined)?.p99_ms,
  rss_peak_mb: (results.memory as { bounded: { rss: { peak: number } } } | undefined)?.bounded.rss.peak,
  rss_peak_default_mb: (results.memory as { default: { rss: { peak: number } } } | undefined)?.default.rss.peak,
  memory_bounded_eps_vs_default: (results.memory as { bounded_eps_vs_default: number } | undefined)
    ?.bounded_eps_vs_default,
  client_raw_eps: consume?.client_raw.eps,
  transport_vs_client: consume && round(consume.raw.eps / consume.client_raw.eps),
  batch_vs_client: consume && round(consume.batch.eps / consume.client_raw.eps),
  dedup_10m_vs_1m: (results.dedup as { ratio: number } | undefined)?.ratio,
  parallel_keys50_speedup: (results.parallel as { speedup: number } | undefined)?.speedup,
  eos_vs_alo: (results.eos as { ratio: number } | undefined)?.ratio,
  eos_commit_interval_ms: (results.eos as { commitIntervalMs: number } | undefined)?.commitIntervalMs,
  eos_window_vs_alo: (results.eos as { windowRatio: number } | undefined)?.windowRatio,
  eos_reader_p99_ms: (results.eos as { readerLatency: { eos: { p99_ms: number } } } | undefined)?.readerLatency.eos
    .p99_ms,
  eos_window_reader_p99_ms: (results.eos as { readerLatency: { window: { p99_ms: number } } } | undefined)
    ?.readerLatency.window.p99_ms,
  alo_reader_p99_ms: (results.eos as { readerLatency: { alo: { p99_ms: number } } } | undefined)?.readerLatency.alo
    .p99_ms,
  wal_eps: (results.wal as { wal: { eps: number } } | undefined)?.wal.eps,
  wal_vs_poll: (results.wal as { wal_vs_poll: number } | undefined)?.wal_vs_poll,
  wal_p99_ms: (results.wal as { latency: { p99_ms: number } } | undefined)?.latency.p99_ms,
  wal_hops_p99_ms: (results.wal as { latency: { hops_p99_ms: number[] } } | undefined)?.latency.hops_p99_ms.join('/'),
  wal_structured_eps: (results.wal as { wal_structured: { eps: number } } | undefined)?.wal_structured.eps,
  e2e_hops_p99_ms: (results.e2e as { hops_p99_ms: number[] } | undefined)?.hops_p99_ms.join('/'),
  transport_raw_headers_eps: consume?.raw.eps,
  headers_vs_plain: consume && round(consume.raw.eps / consume.raw_structured.eps),
  pjs_raw_headers_eps: consume?.pjs_raw.eps,
  pjs_headers_vs_plain: consume && round(consume.pjs_raw.eps / consume.pjs_raw_structured.eps),
  pjs_vs_transport_headers: consume && round(consume.pjs_raw.eps / consume.raw.eps),
};
results.summary = summary;
const file = new URL(
  `./results/${quick ? 'quick-' : ''}${partial ? 'partial-' : ''}${new Date().toISOString().replaceAll(':', '-')}.json`,
  import.meta.url,
);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
log(`results in ${fileURLToPath(file)}`);
if (summary.dedup_10m_vs_1m !== undefined && summary.dedup_10m_vs_1m > 1.5) {
  log(
    `dedup_10m_vs_1m=${summary.dedup_10m_vs_1m} is above the 1.5 target (see docs/dev/development.md, dedup at 10M rows)`,
  );
}
console.log(
  `bench: ${Object.entries(summary)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ')}`,
);
