// A WAL relay in a process of its own, SIGKILLed by itself at `relay:after-publish` (the Nth time it is reached, from
// WAL_CRASH_AT; 0: never): the broker acknowledged a batch, its rows are neither deleted nor confirmed to the slot.
// WAL_NAIVE=1 confirms each transaction on receipt (the naive reader's mistake) so the same kill shows what it costs.
// WAL_SEND_DELAYS (ms, comma-separated, taken in turn by each send) holds sends before they go to the broker, so
// several are in flight at the kill; its last line says how many were made and answered: `crash sends=S answered=A`.
import { writeSync } from 'node:fs';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { WalOptions } from '../../src/outbox/relay-options.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { heldProducer } from '../support/wal-relay.ts';

const env = process.env;
const url = env.WAL_URL!;
const crashAt = Number(env.WAL_CRASH_AT ?? 0);
// WAL_UNSAFE names another of the naive twins' mistakes (`wal.unsafe`).
const unsafe = (env.WAL_NAIVE === '1' ? 'confirm-on-receipt' : env.WAL_UNSAFE || undefined) as WalOptions['unsafe'];
const delays = (env.WAL_SEND_DELAYS ?? '').split(',').filter(Boolean).map(Number);
let reached = 0;
let sends = 0;
let answered = 0;
const db = pgDb({ connectionString: url, max: 4 });
const transport = kafkaTransport({ clientId: 'wal-child' });
const held = heldProducer(transport, async () => {
  const delay = delays[sends++ % Math.max(1, delays.length)];
  if (delay) await sleep(delay);
});
const relay = createRelay({
  db,
  schema: env.WAL_SCHEMA!,
  source: 'wal',
  wal: { connectionString: url, ...(unsafe ? { unsafe } : {}) },
  producerFactory: () => {
    const producer = held();
    return { ...producer, send: (records) => producer.send(records).finally(() => answered++) };
  },
  batchSize: Number(env.WAL_BATCH ?? 1000),
  logger: silentLogger,
  faults: (point) => {
    if (point !== 'relay:after-publish' || crashAt === 0) return;
    reached += 1;
    if (reached === crashAt) {
      writeSync(1, `crash sends=${sends} answered=${answered}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  },
});
await relay.start();
writeSync(1, 'ready\n');
process.on('SIGTERM', () => void relay.close().then(() => process.exit(0)));
