// npm run scenario -- poison [--events N] [--poison P] [--partitions K] [--kafka]
// A poison record at the head of a partition, and a few more behind it, next to healthy partitions: they are retried,
// dead-lettered and the partition moves on while the others never wait; after the fix a redrive (interrupted once and
// resumed) applies each of them once. Embedded by default (PGlite + the log in PostgreSQL); --kafka uses the broker
// and the PostgreSQL server.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { runPoison } from './run.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    poison: { type: 'string', default: '6' },
    partitions: { type: 'string', default: '4' },
    kafka: { type: 'boolean', default: false },
  },
});
const events = Number(values.events);
const poison = Number(values.poison);
const partitions = Number(values.partitions);
if (!Number.isInteger(events) || events < 20) throw new Error('--events must be an integer >= 20');
if (!Number.isInteger(poison) || poison < 1 || poison * 4 > events) throw new Error('--poison must be in 1..events/4');
if (!Number.isInteger(partitions) || partitions < 2) throw new Error('--partitions must be an integer >= 2');

const id = randomBytes(3).toString('hex');
const schema = `poison_${id}`;
let db: Db;
let transport: Transport;
if (values.kafka) {
  db = pgDb();
  transport = kafkaTransport({ clientId: 'poison-scenario' });
  console.log('poison: Kafka at 127.0.0.1:9092 (or KAFKA_BROKERS) + PostgreSQL at DATABASE_URL');
} else {
  db = await pgliteDb();
  transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  console.log('poison: embedded (PGlite in this process, the log in PostgreSQL tables): no server used');
}

const started = Date.now();
try {
  const r = await runPoison({
    db,
    transport,
    schema,
    topic: `poison-${id}-tickets`,
    events,
    partitions,
    poison,
    log: (line) => console.log(line),
  });
  console.log(
    `poison: ${r.recoveredTransient} transient failures recovered in place; after the redrive every event applied ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  console.log(
    `poison: events=${r.events} applied=${r.applied} dead=${r.dead} redriven=${r.redriven} duplicated=${r.duplicated} lost=${r.lost} blocked_ms=${r.blockedMs}`,
  );
  process.exitCode = r.applied + r.dead === r.events && r.duplicated === 0 && r.lost === 0 && r.dead > 0 ? 0 : 1;
} finally {
  if (values.kafka) {
    await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    const admin = transport.admin();
    await admin.deleteTopics([`poison-${id}-tickets`]).catch(() => undefined);
    await admin.close();
  }
  await db.close();
}
