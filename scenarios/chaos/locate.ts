// The auditor's second look, for the orders that have no e-mail when a run ends: is each event still pending (in the
// outbox, or on the topic past the group's committed offset) or provably gone? Run it once the children have stopped.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/port.ts';
import { loadSqlSet } from '../../src/db/sql.ts';
import { sleep } from '../../src/observability/sleep.ts';
import type { Transport } from '../../src/transport/port.ts';
import { untilUp } from './retry.ts';

export interface Whereabouts {
  /** Orders with no e-mail. */
  missing: number;
  /** Missing events still in the outbox (the relay has not published them). */
  pendingOutbox: number;
  /** Missing events on the topic at or past the group's committed offset (the consumer has not reached them). */
  pendingTopic: number;
  /** Missing events found nowhere: not in the outbox, not on the topic past the committed offset, not applied. */
  lost: number;
}

const sql = (schema: string) =>
  loadSqlSet(import.meta.url, { missing: 'missing.sql', inOutbox: 'in-outbox.sql' }, schema);

export async function locateMissing(
  db: Db,
  transport: Transport,
  where: { schema: string; topic: string; group: string },
): Promise<Whereabouts> {
  const queries = sql(where.schema);
  const { rows } = await untilUp(() => db.query<{ id: string }>(queries.missing), { what: 'auditor' });
  const missing = new Set(rows.map((row) => row.id));
  if (missing.size === 0) return { missing: 0, pendingOutbox: 0, pendingTopic: 0, lost: 0 };
  const { rows: queued } = await untilUp(() => db.query<{ key: string }>(queries.inOutbox, [[...missing]]), {
    what: 'auditor',
  });
  for (const { key } of queued) missing.delete(key);
  const onTopic = missing.size === 0 ? 0 : await countOnTopicPastCommitted(transport, where, missing);
  return { missing: rows.length, pendingOutbox: queued.length, pendingTopic: onTopic, lost: missing.size - onTopic };
}

/**
 * Reads the topic from the group's committed offsets to its end (with a group of its own, committing nothing) and
 * counts the records whose key is one of `wanted`.
 */
async function countOnTopicPastCommitted(
  transport: Transport,
  where: { topic: string; group: string },
  wanted: Set<string>,
): Promise<number> {
  const admin = transport.admin();
  try {
    const committed = new Map<number, bigint>();
    for (const position of await untilUp(() => admin.committedOffsets(where.group, where.topic), {
      what: 'auditor',
      retryAll: true,
      giveUpAfterMs: 120_000,
    })) {
      committed.set(position.partition, BigInt(position.offset));
    }
    const ends = await untilUp(() => admin.endOffsets(where.topic), {
      what: 'auditor',
      retryAll: true,
      giveUpAfterMs: 120_000,
    });
    // Partitions with records past the committed offset (a group with none, -1, starts at the beginning).
    const remaining = new Map<number, bigint>();
    for (const end of ends) {
      const from = committed.get(end.partition) ?? -1n;
      if (BigInt(end.offset) > (from < 0n ? 0n : from)) remaining.set(end.partition, BigInt(end.offset));
    }
    if (remaining.size === 0) return 0;
    const found = new Set<string>();
    const reader = transport.consumer({
      group: `${where.group}-audit-${randomBytes(3).toString('hex')}`,
      topics: [where.topic],
      maxBatchSize: 1000,
      fromBeginning: true,
    });
    await reader.run(async (batch, control) => {
      const from = committed.get(batch.partition) ?? -1n;
      for (const record of batch.records) {
        const key = record.key?.toString();
        if (BigInt(record.offset) >= from && key && wanted.has(key)) found.add(key);
      }
      const last = batch.records.at(-1);
      if (last) {
        control.resolve(last.offset);
        if (BigInt(last.offset) + 1n >= (remaining.get(batch.partition) ?? 0n)) remaining.delete(batch.partition);
      }
    });
    const deadline = Date.now() + 120_000;
    while (remaining.size > 0 && Date.now() < deadline) await sleep(100);
    await reader.close();
    if (remaining.size > 0) throw new Error(`chaos: the auditor could not read the topic to its end`);
    return found.size;
  } finally {
    await admin.close();
  }
}
