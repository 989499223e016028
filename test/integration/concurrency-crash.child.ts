// A key-concurrent consumer in a process of its own, for the crash test: argv schema topic group mode crash.
// mode `key`: the library's commit (never past the lowest unfinished record); mode `naive`: the naive twin, which has
// committed its highest finished offset when the kill comes (written just before it). With crash `crash`, the handler of record 0
// waits until every other record is applied and then SIGKILLs its own process, its transaction still open.
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

const [schema, topic, group, mode, crash, total] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const db = pgDb({ max: 9 }); // a connection per lane (8) and one for queries outside them
const transport = postgresTransport({
  db,
  schema,
  leaseMs: 1000,
  heartbeatMs: 200,
  pollIntervalMs: 20,
  logger: silentLogger,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const appliedCount = async (where = 'true') =>
  (await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${schema}.applied WHERE ${where}`)).rows[0]!.c;

const consumer = createConsumer({
  db,
  transport,
  group,
  topics: [topic],
  schema,
  logger: silentLogger,
  concurrency: { mode: 'key', max: 8 },
  handler: async (event, { tx }) => {
    const n = (event.data as { n: number }).n;
    if (crash === 'crash' && n === 0) {
      while ((await appliedCount('n > 0')) < Number(total) - 1) await sleep(20);
      if (mode === 'naive') {
        // What a consumer committing its highest finished offset has committed by now: past record 0, still in flight.
        await db.query(`UPDATE ${schema}.log_offsets SET next_offset = $2 WHERE group_id = $1`, [group, total]);
      }
      process.kill(process.pid, 'SIGKILL');
      await sleep(10_000);
    }
    await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
  },
});
await consumer.start();
// Without a crash: run until every record is applied, or until nothing more comes (the naive twin lost one).
const deadline = Date.now() + 8000;
while (Date.now() < deadline && (await appliedCount()) < Number(total)) await sleep(50);
await sleep(300);
await consumer.close();
await db.close();
