// effectively/kysely against the real PostgreSQL: the ORM contract of orm-cases.ts.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { fromKysely, kyselyIn } from '../../src/orm/kysely.ts';
import { type OrmHandle, ormCases } from './orm-cases.ts';

interface Tables {
  orders: { id: string; total: number };
  applied: { event_id: string; order_id: string };
}

function handle(db: Kysely<Tables>): OrmHandle {
  return {
    async insertOrder(id, total) {
      await db.insertInto('orders').values({ id, total }).execute();
    },
    async recordApplied(eventId, orderId) {
      await db.insertInto('applied').values({ event_id: eventId, order_id: orderId }).execute();
    },
    transaction: (work) => db.transaction().execute((trx) => work(handle(trx), fromKysely(trx))),
  };
}

ormCases({
  name: 'Kysely',
  checksCommit: true,
  async open(url) {
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) });
    return { own: handle(db), within: (tx) => handle(kyselyIn<Tables>(tx)), close: () => db.destroy() };
  },
});
