import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';
import { createRelay } from '../outbox/relay.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';

/** effectively relay [--schema s] [--shards n]: runs until SIGINT/SIGTERM. */
export async function relayCommand(db: Db, schema: string, shards: number | undefined): Promise<void> {
  await migrate(db, { schema });
  const transport = kafkaTransport();
  const relay = createRelay({
    db,
    producerFactory: () => transport.producer({ clientId: 'effectively-relay' }),
    schema,
    ...(shards === undefined ? {} : { shards }),
    onPublished: (count) => console.log(`relay: published ${count}`),
  });
  await relay.start();
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await relay.close();
}
