import { librarySchema } from '../../db/identifiers.ts';
import { invalidOptions } from '../../errors.ts';
import { stderrLogger } from '../../observability/logger.ts';
import { maxTimerMs } from '../../observability/sleep.ts';
import type { Consumer, ConsumerOptions, Transport } from '../port.ts';
import { PostgresAdmin } from './admin.ts';
import { PostgresConsumer } from './consumer.ts';
import type { PostgresTransportOptions, ResolvedPostgresOptions } from './options.ts';
import { PostgresProducer } from './producer.ts';

/**
 * The `postgres` transport: a partitioned log in PostgreSQL tables, with consumer groups, leases, pause/resume/seek.
 * On PGlite it is the embedded default (no server at all); on a server it serves teams without Kafka on one machine.
 */
export function postgresTransport(options: PostgresTransportOptions): Transport & { admin(): PostgresAdmin } {
  const resolved: ResolvedPostgresOptions = {
    db: options.db,
    schema: librarySchema(options.schema),
    defaultPartitions: options.defaultPartitions ?? 6,
    pollIntervalMs: options.pollIntervalMs ?? 50,
    heartbeatMs: options.heartbeatMs ?? 500,
    leaseMs: options.leaseMs ?? 5000,
    logger: options.logger ?? stderrLogger,
  };
  if (!Number.isInteger(resolved.defaultPartitions) || resolved.defaultPartitions < 1) {
    throw invalidOptions('defaultPartitions', 'a positive integer');
  }
  if (!(resolved.leaseMs > resolved.heartbeatMs)) throw invalidOptions('leaseMs', 'greater than heartbeatMs');
  // Timers: one past maxTimerMs fires after 1 ms (a heartbeat or a poll in a busy loop). The lease itself is SQL
  // arithmetic in double precision: any length.
  for (const name of ['pollIntervalMs', 'heartbeatMs'] as const) {
    if (!(resolved[name] > 0 && resolved[name] <= maxTimerMs)) {
      throw invalidOptions(name, `a positive number of ms up to ${maxTimerMs}`);
    }
  }
  return {
    name: 'postgres',
    producer: () => new PostgresProducer(resolved),
    consumer: (consumerOptions: ConsumerOptions): Consumer => new PostgresConsumer(resolved, consumerOptions),
    admin: () => new PostgresAdmin(resolved),
  };
}
