// A WAL relay in a process of its own, SIGKILLed by itself at `relay:after-publish` (the Nth time it is reached, from
// WAL_CRASH_AT; 0: never): the broker acknowledged a batch, its rows are neither deleted nor confirmed to the slot.
// WAL_NAIVE=1 confirms each transaction on receipt (the naive reader's mistake) so the same kill shows what it costs.
import { writeSync } from 'node:fs';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';

const env = process.env;
const url = env.WAL_URL!;
const crashAt = Number(env.WAL_CRASH_AT ?? 0);
let reached = 0;
const db = pgDb({ connectionString: url, max: 4 });
const transport = kafkaTransport({ clientId: 'wal-child' });
const relay = createRelay({
  db,
  schema: env.WAL_SCHEMA!,
  source: 'wal',
  wal: { connectionString: url, ...(env.WAL_NAIVE === '1' ? { unsafe: 'confirm-on-receipt' as const } : {}) },
  producerFactory: () => transport.producer(),
  batchSize: Number(env.WAL_BATCH ?? 1000),
  logger: silentLogger,
  faults: (point) => {
    if (point !== 'relay:after-publish' || crashAt === 0) return;
    reached += 1;
    if (reached === crashAt) {
      writeSync(1, 'crash\n');
      process.kill(process.pid, 'SIGKILL');
    }
  },
});
await relay.start();
writeSync(1, 'ready\n');
process.on('SIGTERM', () => void relay.close().then(() => process.exit(0)));
