import type { Queryable } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';

export interface SystemAudit {
  orders: number;
  cancelled: number;
  unheld: number;
  unreleased: number;
  refused: number;
  /** Refused orders (sold out) the order service has not cancelled: charged, and no refund coming. */
  uncompensated: number;
  showsWrong: number;
  searchBehind: number;
  pending: number;
  /** Dead letters of the poison order (one per service reading the orders topic). */
  poisoned: number;
  /** Any other dead letter: an order a service gave up on. */
  otherDead: number;
}

/** Reads the order, inventory and search services' tables (system-audit.sql). */
export async function auditSystem(db: Queryable, schema: string, poisonKey = ''): Promise<SystemAudit> {
  const sql = loadSql(import.meta.url, 'system-audit.sql', schema);
  const { rows } = await db.query<Record<string, string>>(sql, [poisonKey]);
  const n = (name: string) => Number(rows[0]?.[name]);
  return {
    orders: n('orders'),
    cancelled: n('cancelled'),
    unheld: n('unheld'),
    unreleased: n('unreleased'),
    refused: n('refused'),
    uncompensated: n('uncompensated'),
    showsWrong: n('shows_wrong'),
    searchBehind: n('search_behind'),
    pending: n('pending'),
    poisoned: n('poisoned'),
    otherDead: n('other_dead'),
  };
}

/**
 * Nothing left in flight: every order decided by inventory, every cancel released, every refusal cancelled, search
 * caught up, outbox empty.
 */
export const settled = (a: SystemAudit) =>
  a.unheld === 0 && a.unreleased === 0 && a.uncompensated === 0 && a.searchBehind === 0 && a.pending === 0;
