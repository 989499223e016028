// The consumer of given-up-crash-kafka.test.ts in a process of its own: argv schema topic group. It refuses record 1
// (PermanentError) for as long as no dead letter of it exists (a record that would pass once tried again, like one
// refused for reference data that arrived later), and SIGKILLs its own process as soon as the dead letter is kept:
// the offset commit past the record has not reached the broker.
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';

const [schema, topic, group] = process.argv.slice(2) as [string, string, string];
const db = pgDb({ max: 4 });
const consumer = createConsumer({
  db,
  transport: kafkaTransport({ clientId: 'given-up-crash', logger: silentLogger }),
  group,
  topics: [topic],
  schema,
  logger: silentLogger,
  sessionTimeoutMs: 6000,
  onDeadLetter: () => process.kill(process.pid, 'SIGKILL'),
  handler: async (event, { tx }) => {
    const { n } = event.data as { n: number };
    if (n === 1) {
      const { rows } = await tx.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${schema}.dead_letters`);
      if (rows[0]!.c === 0) throw new PermanentError('refused until it is dead-lettered');
    }
    await tx.query(`INSERT INTO ${schema}.applied (n, pid) VALUES ($1, $2)`, [n, process.pid]);
  },
});
await consumer.start();
await new Promise((resolve) => setTimeout(resolve, 60_000));
