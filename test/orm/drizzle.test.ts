// effectively/drizzle (node-postgres driver) against the real PostgreSQL: the ORM contract of orm-cases.ts.
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { drizzleIn, fromDrizzle } from '../../src/orm/drizzle.ts';
import { type OrmHandle, ormCases } from './orm-cases.ts';

const orders = pgTable('orders', { id: text('id').primaryKey(), total: integer('total').notNull() });
const applied = pgTable('applied', { eventId: text('event_id').notNull(), orderId: text('order_id').notNull() });

type Database = Pick<NodePgDatabase, 'insert' | 'transaction'>;

function handle(db: Database): OrmHandle {
  return {
    async insertOrder(id, total) {
      await db.insert(orders).values({ id, total });
    },
    async recordApplied(eventId, orderId) {
      await db.insert(applied).values({ eventId, orderId });
    },
    transaction: (work) => db.transaction((tx) => work(handle(tx), fromDrizzle(tx))),
  };
}

ormCases({
  name: 'Drizzle',
  checksCommit: false,
  async open(url) {
    const pool = new pg.Pool({ connectionString: url });
    return { own: handle(drizzle({ client: pool })), within: (tx) => handle(drizzleIn(tx)), close: () => pool.end() };
  },
});
