// A consumer in a process of its own for the crash-loop test: argv schema topic group. Its handler SIGKILLs the
// process on the record with n = 1 (as an out-of-memory kill or a native crash would); the others are applied. It
// exits 0 once every other record is applied and record 1 is a dead letter.
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

const [schema, topic, group] = process.argv.slice(2) as [string, string, string];
const db = pgDb({ max: 4 });
const transport = postgresTransport({ db, schema, leaseMs: 1000, heartbeatMs: 200, pollIntervalMs: 20 });
const consumer = createConsumer({
  db,
  transport,
  group,
  topics: [topic],
  schema,
  logger: silentLogger,
  maxAttempts: 2,
  handler: async (event, { tx }) => {
    const n = (event.data as { n: number }).n;
    if (n === 1) process.kill(process.pid, 'SIGKILL');
    await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
  },
});
await consumer.start();
const count = async (sql: string) => (await db.query<{ c: number }>(sql)).rows[0]!.c;
for (;;) {
  const applied = await count(`SELECT count(*)::int AS c FROM ${schema}.applied`);
  const dead = await count(`SELECT count(*)::int AS c FROM ${schema}.dead_letters`);
  if (applied >= 2 && dead >= 1) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await consumer.close();
await db.close();
process.exit(0);
