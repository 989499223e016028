// The transports every conformance case runs against: Kafka (on each of its two clients), the `postgres` log on the server, and on PGlite.
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { platformaticTransport } from '../../src/transport/platformatic/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { randomName } from '../support/fixtures.ts';

export interface TransportUnderTest {
  name: string;
  needs: ('kafka' | 'postgres')[];
  /** `db`: the database the transport lives in (the postgres transports). */
  open(): Promise<{ transport: Transport; db?: Db; close(): Promise<void> }>;
}

async function onDb(db: Db, dropSchema: boolean) {
  const schema = randomName('conf');
  await migrate(db, { schema });
  return {
    db,
    transport: postgresTransport({ db, schema, heartbeatMs: 150, leaseMs: 1500, pollIntervalMs: 20 }),
    async close() {
      if (dropSchema) await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await db.close();
    },
  };
}

export const transportsUnderTest: TransportUnderTest[] = [
  {
    name: 'kafka',
    needs: ['kafka'],
    open: async () => ({ transport: kafkaTransport({ clientId: 'conformance' }), close: async () => undefined }),
  },
  {
    name: 'kafka (pure JavaScript client)',
    needs: ['kafka'],
    open: async () => ({
      transport: platformaticTransport({ clientId: 'conformance' }),
      close: async () => undefined,
    }),
  },
  { name: 'postgres (server)', needs: ['postgres'], open: () => onDb(pgDb({ max: 4 }), true) },
  { name: 'postgres (PGlite)', needs: [], open: async () => onDb(await pgliteDb(), false) },
];
