import type { Queryable } from '../db/port.ts';
import type { Logger } from '../observability/logger.ts';
import { storableText } from './refusal.ts';

export interface RefusedEvent {
  seq: string;
  id: string;
  topic: string;
  key: string;
  /** The transport's code (`ERR_MSG_SIZE_TOO_LARGE`, `ERR_TOPIC_EXCEPTION`, a SQLSTATE, an `EFF_*` code). */
  errorCode: string;
  reason: string;
}

/** Moves one row the transport refused for good from the outbox to `outbox_refused` (`relay-refuse.sql`), and says so. */
export async function setAside(
  tx: Queryable,
  statement: string,
  row: { seq: string; topic: string; key: string },
  code: string,
  error: unknown,
  logger: Logger,
): Promise<RefusedEvent> {
  const reason = storableText(error instanceof Error ? error.message : String(error));
  const { rows } = await tx.query<{ id: string }>(statement, [row.seq, code, reason]);
  const id = rows[0]?.id ?? '';
  const refused = { seq: String(row.seq), id, topic: row.topic, key: row.key, errorCode: code, reason };
  logger.error('relay set aside an outbox row the transport refused; later rows of its key wait', { ...refused });
  return refused;
}
