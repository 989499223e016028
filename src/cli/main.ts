// effectively <command> — migrate | relay
import { parseArgs } from 'node:util';
import { migrate } from '../db/migrate.ts';
import { pgDb } from '../db/pg.ts';
import { createRelay } from '../outbox/relay.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';

const usage = `usage: effectively <command> [options]
  migrate [--schema s]            apply the library's migrations (DATABASE_URL)
  relay   [--schema s] [--shards n] publish the outbox to Kafka (DATABASE_URL, KAFKA_BROKERS) until SIGINT/SIGTERM`;

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: { schema: { type: 'string', default: 'effectively' }, shards: { type: 'string' } },
});
const db = pgDb();

if (command === 'migrate') {
  const result = await migrate(db, { schema: values.schema });
  console.log(
    `migrate: schema=${values.schema} version=${result.version} applied=${result.applied.join(',') || 'none'}`,
  );
  await db.close();
} else if (command === 'relay') {
  await migrate(db, { schema: values.schema });
  const relay = createRelay({
    db,
    producer: kafkaTransport().producer({ clientId: 'effectively-relay' }),
    schema: values.schema,
    ...(values.shards ? { shards: Number(values.shards) } : {}),
    onPublished: (count) => console.log(`relay: published ${count}`),
  });
  await relay.start();
  const stop = () => void relay.close().then(() => db.close());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} else {
  console.error(usage);
  await db.close();
  process.exitCode = command ? 2 : 0;
}
