import type { Queryable } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';

export interface StoryAudit {
  orders: number;
  emails: number;
  /** Orders with no e-mail (Bruno). */
  lost: number;
  /** E-mails beyond one per order, and e-mails with no order (Ana). */
  duplicated: number;
}

/** Reads the story's audit: every order should have exactly one e-mail. */
export async function auditStory(db: Queryable, schema: string): Promise<StoryAudit> {
  const { rows } = await db.query<Record<string, string>>(loadSql(import.meta.url, 'audit.sql', schema));
  const row = rows[0] ?? {};
  return {
    orders: Number(row.orders),
    emails: Number(row.emails),
    lost: Number(row.lost),
    duplicated: Number(row.duplicated),
  };
}
