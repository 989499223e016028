// Where a boxoffice scenario runs. embedded: PGlite in this process and the log in its tables, nothing else.
// kafka: the broker (KAFKA_BROKERS) and the PostgreSQL server (DATABASE_URL), in a schema and topics of the run's own,
// removed afterwards.
import { randomBytes } from 'node:crypto';
import type { BoxofficeDeps } from '../../examples/boxoffice/shared/deps.ts';
import { ordersTopic, seatsTopic } from '../../examples/boxoffice/shared/events.ts';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { prefixedTransport } from './prefixed-transport.ts';

export type TransportName = 'embedded' | 'kafka';

export interface Environment {
  deps: BoxofficeDeps;
  describe: string;
  /** Removes what the run made (Kafka: its schema and topics) and closes the database. */
  close(): Promise<void>;
}

/** `shared`: an embedded database to run in (a schema of the run's own, left there), else a new one. */
export async function openEnvironment(transport: TransportName, scenario: string, shared?: Db): Promise<Environment> {
  const id = randomBytes(3).toString('hex');
  if (transport === 'embedded') {
    const db = shared ?? (await pgliteDb());
    const schema = shared ? `${scenario.replaceAll('-', '_')}_${id}` : 'boxoffice';
    return {
      deps: {
        db,
        schema,
        logger: silentLogger,
        transport: postgresTransport({ db, schema, pollIntervalMs: 20, heartbeatMs: 200, leaseMs: 2000 }),
      },
      describe: 'embedded (PGlite in this process, the log in its tables): no server used',
      close: async () => {
        if (!shared) await db.close();
      },
    };
  }
  const db = pgDb({ max: 24 });
  const schema = `${scenario.replaceAll('-', '_')}_${id}`;
  const prefix = `${scenario}-${id}-`;
  const transport_ = prefixedTransport(kafkaTransport({ clientId: scenario, logger: silentLogger }), prefix);
  return {
    deps: { db, schema, logger: silentLogger, groupPrefix: prefix, transport: transport_ },
    describe: `Kafka (topics ${prefix}boxoffice.*) + the PostgreSQL server (schema ${schema})`,
    async close() {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await db.close();
      const admin = transport_.admin();
      const topics = (await admin.listTopics().catch(() => [])).filter((t) => t.startsWith('boxoffice.'));
      await admin.deleteTopics(topics.length > 0 ? topics : [ordersTopic, seatsTopic]).catch(() => undefined);
      await admin.close();
    },
  };
}
