// Child process of the memory benchmark: only the consumer lives here, so its RSS is the consumer's own.
// env: BENCH_SCHEMA, BENCH_TOPIC, BENCH_GROUP, BENCH_EVENTS. Prints one JSON line.
import { pgDb } from '../src/db/pg.ts';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import { consumeBatch } from './consume.ts';

const env = process.env;
const db = pgDb({ max: 2 });
const run = await consumeBatch(
  db,
  kafkaTransport({ clientId: 'bench-memory' }),
  env.BENCH_SCHEMA!,
  env.BENCH_TOPIC!,
  Number(env.BENCH_EVENTS),
  env.BENCH_GROUP!,
);
await db.close();
console.log(JSON.stringify(run));
process.exit(0);
