import type { Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { storableText } from '../db/storable.ts';
import type { ConsoleUser } from './auth.ts';

/** One row of the audit log: who did what, to what, with which outcome. */
export interface AuditEntry {
  id: string;
  at: Date;
  actor: string;
  role: string;
  action: string;
  target: string;
  outcome: string;
  details: Record<string, unknown>;
}

/** The console's audit log (table `console_audit`): rows are only ever added. */
export function auditLog(db: Queryable, schema: string) {
  const sql = loadSqlSet(import.meta.url, { insert: 'audit-insert.sql', list: 'audit-list.sql' }, schema);
  return {
    async record(
      user: ConsoleUser,
      entry: { action: string; target: string; outcome: string; details?: Record<string, unknown> },
    ): Promise<void> {
      await db.query(sql.insert, [
        storableText(user.name),
        user.role,
        entry.action,
        storableText(entry.target),
        entry.outcome,
        storableText(JSON.stringify(entry.details ?? {})),
      ]);
    },
    async list(limit = 200, action?: string): Promise<AuditEntry[]> {
      const { rows } = await db.query<AuditEntry & Record<string, unknown>>(sql.list, [limit, action ?? null]);
      return rows;
    },
  };
}

export type AuditLog = ReturnType<typeof auditLog>;
