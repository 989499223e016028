// effectively/kysely against the real PostgreSQL: the ORM contract of orm-cases.ts, with the CamelCasePlugin many
// projects use (it renames the columns of every row the Kysely reads: the library's own reads must not go through it).
import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { fromKysely, kyselyIn } from '../../src/orm/kysely.ts';
import { type OrmHandle, ormCases } from './orm-cases.ts';

interface Tables {
  orders: { id: string; total: number };
  applied: { eventId: string; orderId: string };
}

function handle(db: Kysely<Tables>): OrmHandle {
  return {
    async insertOrder(id, total) {
      await db.insertInto('orders').values({ id, total }).execute();
    },
    async recordApplied(eventId, orderId) {
      await db.insertInto('applied').values({ eventId, orderId }).execute();
    },
    transaction: (work) => db.transaction().execute((trx) => work(handle(trx), fromKysely(trx))),
  };
}

ormCases({
  name: 'Kysely',
  checksCommit: true,
  async open(url) {
    const plugins = [new CamelCasePlugin()];
    const pool = new pg.Pool({ connectionString: url });
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), plugins });
    return { own: handle(db), within: (tx) => handle(kyselyIn<Tables>(tx, { plugins })), close: () => db.destroy() };
  },
});
