import type { Db } from '../db/port.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { defaultBrokers } from '../transport/kafka/config.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';
import type { Transport } from '../transport/port.ts';
import { postgresTransport } from '../transport/postgres/transport.ts';

/** Where a redrive sends: the transport, its name, and where that is in words (for the line the operator reads). */
export interface RedriveTarget {
  transport: Transport;
  name: 'kafka' | 'postgres';
  where: string;
}

/**
 * Whether `db` is an embedded database (`pgliteDb()`): it lives in this process, so its consumers read the embedded
 * log (the `postgres` transport in that same database), never a Kafka broker that may happen to run on the machine.
 */
export function isEmbeddedDb(db: Db): boolean {
  return 'pglite' in db;
}

/**
 * The transport a redrive sends with: the one named (`--transport`), else the one the Db implies. An embedded Db
 * implies its own log. A PostgreSQL server serves both (consumers on Kafka, or on the `postgres` transport's log in
 * it), and a redrive into the one no consumer reads marks letters redriven that nobody will ever apply: so it refuses
 * to guess (`EFF_REDRIVE_TRANSPORT_UNKNOWN`).
 */
export function redriveTarget(db: Db, schema: string, named: string | undefined): RedriveTarget {
  const name = named ?? (isEmbeddedDb(db) ? 'postgres' : undefined);
  if (name === 'postgres')
    return {
      transport: postgresTransport({ db, schema }),
      name,
      where: `the ${isEmbeddedDb(db) ? 'embedded' : 'postgres transport'} log in schema ${schema}`,
    };
  if (name === 'kafka') return { transport: kafkaTransport(), name, where: `Kafka at ${defaultBrokers().join(',')}` };
  throw new EffectivelyError(
    ErrorCodes.EFF_REDRIVE_TRANSPORT_UNKNOWN,
    'a redrive on a PostgreSQL server cannot tell whether the consumers read Kafka or the postgres transport: ' +
      'say --transport kafka or --transport postgres (nothing was sent)',
  );
}
