// npm start [-- --orders N --crashes C --boxoffice-orders B --kafka]
// The boxoffice story in one process. First the seeds' story side by side: N ticket orders, OrderConfirmed, one e-mail
// per order, while components crash at the seeds' hops; the naive build (no outbox, no dedup) gives Ana duplicates
// and Bruno nothing, effectively gives each exactly one. Then the whole boxoffice (order, inventory, search,
// notification, payment, alerting) under a load generator with faults: crashes, provider 503s and timeouts, a duplicate
// delivery, a poison order; it ends with the audit line and the report's path.
// Embedded by default (PGlite + the log in PostgreSQL, no server); --kafka runs it on Kafka + the PostgreSQL server.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { progress } from '../../src/cli/progress.ts';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { runScenario } from '../boxoffice/scenario.ts';
import { stories } from '../boxoffice/stories.ts';
import { createTimeline, type Timeline } from '../report/timeline.ts';
import { type Pipeline, type PipelineResult, runPipeline } from './pipeline.ts';

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000' },
    crashes: { type: 'string', default: '6' },
    'boxoffice-orders': { type: 'string', default: '200' },
    kafka: { type: 'boolean', default: false },
  },
});
const orders = Number(values.orders);
const crashCount = Number(values.crashes);
if (!Number.isInteger(orders) || orders < 1) throw new Error('--orders must be a positive integer');
if (!Number.isInteger(crashCount) || crashCount < 0) throw new Error('--crashes must be a non-negative integer');

const hops = ['writer:after-save', 'consumer:after-db-commit', 'relay:after-publish'];
const crashes = Array.from({ length: crashCount }, (_, i) => hops[i % hops.length]!);
const started = Date.now();
const id = randomBytes(3).toString('hex');
let db: Db;
let transport: (schema: string) => Transport;
if (values.kafka) {
  db = pgDb();
  const kafka = kafkaTransport({ clientId: 'boxoffice-demo' });
  transport = () => kafka;
  console.log('demo: Kafka at 127.0.0.1:9092 (or KAFKA_BROKERS) + PostgreSQL at DATABASE_URL');
} else {
  db = await pgliteDb();
  transport = (schema) => postgresTransport({ db, schema, pollIntervalMs: 10, heartbeatMs: 200, leaseMs: 2000 });
  console.log('demo: embedded (PGlite in this process, the log in PostgreSQL tables): no server used');
}

const results = new Map<Pipeline, PipelineResult>();
const timelines = new Map<Pipeline, Timeline>();
for (const pipeline of ['naive', 'effectively'] as const) {
  const schema = `demo_${pipeline}_${id}`;
  const bar = progress(pipeline, orders, 'e-mails');
  const timeline = createTimeline();
  timelines.set(pipeline, timeline);
  let emailed = 0;
  results.set(
    pipeline,
    await runPipeline({
      pipeline,
      db,
      transport: transport(schema),
      schema,
      orders,
      crashes,
      onProgress: (emails) => {
        bar.update(emails);
        timeline.count('applied', emails - emailed);
        emailed = emails;
      },
    }),
  );
  bar.end();
  await timeline.stop();
  if (values.kafka) await db.query(`DROP SCHEMA ${schema} CASCADE`);
}
const header = ['pipeline', 'orders', 'emails', 'duplicates (Ana)', 'missing (Bruno)', 'crashes'];
const rows = [...results].map(([name, r]) => [name, r.orders, r.emails, r.duplicates, r.missing, r.crashes.length]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
const line = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(widths[i]!)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
const effectively = results.get('effectively')!;
console.log(
  `crashes at: ${effectively.crashes.join(', ') || 'none'} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
const naive = results.get('naive')!;
const pipelinesOk = effectively.duplicates === 0 && effectively.missing === 0 && effectively.orders === orders;

// The whole boxoffice under load, with faults
const boxOrders = Number(values['boxoffice-orders']);
console.log(`\nboxoffice: ${boxOrders} orders through order, inventory, search, notification, payment and alerting`);
const box = await runScenario({
  ...stories['notification-system'](true),
  scenario: 'boxoffice',
  transport: values.kafka ? 'kafka' : 'embedded',
  orders: boxOrders,
  ...(values.kafka ? {} : { embeddedDb: db }),
  otherVariants: [
    {
      name: 'naive',
      timeline: timelines.get('naive')!,
      auditLine: `naive: orders=${naive.orders} emails=${naive.emails} duplicates=${naive.duplicates} lost=${naive.missing}`,
      description: 'The naive build (no outbox, no dedup): e-mails applied through the same crashes.',
    },
  ],
  log: (line) => console.log(line),
});
await db.close();
console.log(
  `boxoffice: crashes ${box.crashes.join(', ')}; poison order dead-lettered (${box.audit.poisoned}), alert after ` +
    `${box.alertAfterS?.toFixed(1) ?? '-'} s (${((Date.now() - started) / 1000).toFixed(1)} s in all)`,
);
console.log(`report: ${box.report}`);
console.log(box.line);
process.exitCode = pipelinesOk && box.ok ? 0 : 1;
