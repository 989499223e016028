import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';
import { createRelay } from '../outbox/relay.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';

/** How often a running relay reports what it published (only when it published something). */
const reportEveryMs = 10_000;

/**
 * effectively relay [--schema s] [--shards n]: runs until SIGINT/SIGTERM. Says when it runs, what it published every
 * 10 s (not one line per pass: thousands a second under load), and the total when it stops.
 */
export async function relayCommand(db: Db, schema: string, shards: number | undefined): Promise<void> {
  await migrate(db, { schema });
  const transport = kafkaTransport();
  let total = 0;
  let sinceReport = 0;
  const relay = createRelay({
    db,
    producerFactory: () => transport.producer({ clientId: 'effectively-relay' }),
    schema,
    ...(shards === undefined ? {} : { shards }),
    onPublished: (count) => {
      total += count;
      sinceReport += count;
    },
  });
  await relay.start();
  console.log(`relay: running on schema ${schema}; SIGINT or SIGTERM to stop`);
  const report = setInterval(() => {
    if (sinceReport === 0) return;
    console.log(`relay: published ${sinceReport} in the last ${reportEveryMs / 1000} s (${total} in all)`);
    sinceReport = 0;
  }, reportEveryMs);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  clearInterval(report);
  await relay.close();
  console.log(`relay: stopped; published ${total} in all`);
}
