// npm run scenario -- retry-storm [--orders N] [--rate L] [--outage-s S] [--partitions K] [--kafka]
// The e-mail provider is down (503) for the first S seconds of traffic while orders keep coming: the breaker opens
// and pauses the notification consumer, the effects wait in the ledger, nothing is dropped or sent twice, and when the
// provider is back the backlog drains at its limit L, never faster. Embedded by default (PGlite + the log in
// PostgreSQL); --kafka uses the broker and the PostgreSQL server (a fresh schema, dropped after).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { runRetryStorm } from './run.ts';

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '250' },
    'outage-s': { type: 'string', default: '20' },
    partitions: { type: 'string', default: '4' },
    kafka: { type: 'boolean', default: false },
  },
});
const orders = Number(values.orders);
const rate = Number(values.rate);
const outageS = Number(values['outage-s']);
const partitions = Number(values.partitions);
if (!Number.isInteger(orders) || orders < 1) throw new Error('--orders must be a positive integer');
if (!(rate >= 1 && rate <= 5000)) throw new Error('--rate must be in 1..5000 calls per second');
if (!(outageS >= 0 && outageS <= 600)) throw new Error('--outage-s must be in 0..600 seconds');
if (!Number.isInteger(partitions) || partitions < 1) throw new Error('--partitions must be a positive integer');

const id = randomBytes(3).toString('hex');
const schema = `retry_storm_${id}`;
const topic = `retry-storm-${id}-orders`;
let db: Db;
let transport: Transport;
if (values.kafka) {
  db = pgDb();
  transport = kafkaTransport({ clientId: 'retry-storm-scenario' });
  console.log('retry-storm: Kafka at 127.0.0.1:9092 (or KAFKA_BROKERS) + PostgreSQL at DATABASE_URL');
} else {
  db = await pgliteDb();
  transport = postgresTransport({ db, schema, pollIntervalMs: 50 });
  console.log('retry-storm: embedded (PGlite in this process, the log in PostgreSQL tables): no server used');
}
console.log(`retry-storm: ${orders} orders, provider limit ${rate}/s, provider down (503) for the first ${outageS} s`);

try {
  const r = await runRetryStorm({
    db,
    transport,
    schema,
    topic,
    orders,
    ratePerSecond: rate,
    outageMs: outageS * 1000,
    partitions,
    log: (line) => console.log(line),
  });
  console.log(
    `retry-storm: ${r.requests} provider requests; consumer paused ${(r.consumerPausedMs / 1000).toFixed(1)} s by the ` +
      `open breaker, lag up to ${r.maxLag}; missing=${r.missing} dead_alerts=${r.deadAlerts} ` +
      `(${(r.durationMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `retry-storm: orders=${r.orders} sent=${r.sent} duplicates=${r.duplicates} max_rps=${r.maxRps} limit_rps=${r.limitRps} breaker_opened=${r.breakerOpened} dead=${r.dead}`,
  );
  const ok =
    r.sent === r.orders &&
    r.missing === 0 &&
    r.duplicates === 0 &&
    r.maxRps <= r.limitRps * 1.1 &&
    r.breakerOpened >= (outageS > 0 ? 1 : 0) &&
    r.dead === 0;
  process.exitCode = ok ? 0 : 1;
} finally {
  if (values.kafka) {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    const admin = transport.admin();
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  }
  await db.close();
}
