// npm run bench [-- --quick] [--events N] [--memory-events N]
// What effectively-once costs: consume (raw vs per-record vs batch) on Kafka + PostgreSQL, relay throughput and
// end-to-end latency, consumer memory over a long run, and the embedded transport. Writes bench/results/<time>.json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { pgDb } from '../src/db/pg.ts';
import { pgliteDb } from '../src/db/pglite.ts';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import { postgresTransport } from '../src/transport/postgres/transport.ts';
import { consumeBatch, consumePerRecord, consumeRaw, createEffectsTable } from './consume.ts';
import { endToEnd, relaySaturation } from './relay.ts';
import { preload, round } from './support.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    events: { type: 'string' },
    'memory-events': { type: 'string' },
  },
});
const quick = values.quick;
const events = Number(values.events ?? (quick ? 20_000 : 200_000));
const perRecordEvents = Math.min(events, quick ? 3000 : 20_000);
const memoryEvents = Number(values['memory-events'] ?? (quick ? 20_000 : 1_000_000));
const relayEvents = quick ? 20_000 : 100_000;
const e2eSeconds = quick ? 3 : 10;
const embeddedEvents = quick ? 5000 : 50_000;
const id = Date.now().toString(36);
const log = (line: string) => console.log(`bench: ${line}`);
/** Between phases: let PostgreSQL's autovacuum and the broker's background work from the last phase pass. */
const settle = () => new Promise((resolve) => setTimeout(resolve, quick ? 500 : 5000));

try {
  execFileSync('bash', [fileURLToPath(new URL('../scripts/kafka.sh', import.meta.url)), 'start'], { stdio: 'inherit' });
} catch {
  throw new Error('bench: the Kafka broker could not be started (scripts/kafka.sh start)');
}

const db = pgDb({ max: 4 });
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
};

try {
  // 1. relay and end-to-end latency first, on a quiet machine (before the bulk inserts wake autovacuum)
  const relayTopic = topic('relay');
  await admin.createTopics([{ topic: relayTopic, partitions: 6 }]);
  const relay = await relaySaturation(db, transport, schema, relayTopic, relayEvents);
  log(`relay at saturation: ${relay.eps} events/s`);
  const e2eTopic = topic('e2e');
  await admin.createTopics([{ topic: e2eTopic, partitions: 6 }]);
  const e2e = await endToEnd(db, transport, schema, e2eTopic, `e2e-${id}`, 1000, e2eSeconds);
  log(`end to end at 1000 events/s: p50 ${e2e.p50_ms} ms, p95 ${e2e.p95_ms} ms, p99 ${e2e.p99_ms} ms`);
  results.relay = relay;
  results.e2e = e2e;

  await settle();
  // 2. consume
  const consumeTopic = topic('consume');
  await admin.createTopics([{ topic: consumeTopic, partitions: 6 }]);
  log(`preloading ${events} events of ~1 KB into 6 partitions`);
  const producer = transport.producer();
  await preload(producer, consumeTopic, events);
  const raw = await consumeRaw(transport, consumeTopic, events, `raw-${id}`);
  log(`consume raw: ${raw.eps} events/s`);
  const perRecord = await consumePerRecord(db, transport, schema, consumeTopic, perRecordEvents, `per-record-${id}`);
  log(`consume per-record (${perRecordEvents} events): ${perRecord.eps} events/s`);
  const batch = await consumeBatch(db, transport, schema, consumeTopic, events, `batch-${id}`);
  log(`consume effectively batch: ${batch.eps} events/s`);
  results.consume = { raw, per_record: perRecord, batch };

  await settle();
  // 3. memory over a long run
  const memoryTopic = topic('memory');
  await admin.createTopics([{ topic: memoryTopic, partitions: 6 }]);
  log(`preloading ${memoryEvents} events for the memory run`);
  await preload(producer, memoryTopic, memoryEvents);
  await producer.close();
  // In a child process, so the RSS is the consumer's alone (not this process's preloading).
  const memory = JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./memory-child.ts', import.meta.url))], {
      env: {
        ...process.env,
        BENCH_SCHEMA: schema,
        BENCH_TOPIC: memoryTopic,
        BENCH_GROUP: `memory-${id}`,
        BENCH_EVENTS: String(memoryEvents),
      },
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    })
      .trim()
      .split('\n')
      .at(-1)!,
  ) as { eps: number; rss: { start: number; peak: number; end: number } };
  log(
    `memory over ${memoryEvents} events: rss start ${memory.rss.start} MB, peak ${memory.rss.peak} MB, end ${memory.rss.end} MB`,
  );
  results.memory = memory;
  await admin.deleteTopics([consumeTopic, relayTopic, e2eTopic, memoryTopic]).catch(() => undefined);
} finally {
  await admin.close();
  await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
  await db.close();
}

// 4. embedded: the same batch consume on PGlite with the postgres transport
{
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

const consume = results.consume as { raw: { eps: number }; per_record: { eps: number }; batch: { eps: number } };
const summary = {
  batch_vs_raw: round(consume.batch.eps / consume.raw.eps),
  batch_vs_per_record: round(consume.batch.eps / consume.per_record.eps, 1),
  relay_eps: (results.relay as { eps: number }).eps,
  e2e_p99_ms: (results.e2e as { p99_ms: number }).p99_ms,
  rss_peak_mb: (results.memory as { rss: { peak: number } }).rss.peak,
};
results.summary = summary;
const file = new URL(
  `./results/${quick ? 'quick-' : ''}${new Date().toISOString().replaceAll(':', '-')}.json`,
  import.meta.url,
);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
log(`results in ${fileURLToPath(file)}`);
console.log(
  `bench: batch_vs_raw=${summary.batch_vs_raw} batch_vs_per_record=${summary.batch_vs_per_record} relay_eps=${summary.relay_eps} e2e_p99_ms=${summary.e2e_p99_ms} rss_peak_mb=${summary.rss_peak_mb}`,
);
