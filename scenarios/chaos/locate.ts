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
  /** Missing events still in the outbox only (the relay has not published them). */
  pendingOutbox: number;
  /** Missing events on the topic at or past the group's committed offset (the consumer has not reached them). */
  pendingTopic: number;
  /** Missing events found nowhere: not in the outbox, not on the topic past the committed offset, not applied. */
  lost: number;
  /** Of the lost: dead-lettered by the group, or set aside by the relay as refused (each with its reason, for the log). */
  deadLettered: number;
  refused: number;
  givenUp: { key: string; how: string; reason: string }[];
}

const sql = (schema: string) =>
  loadSqlSet(
    import.meta.url,
    { missing: 'missing.sql', inOutbox: 'in-outbox.sql', claimed: 'claimed.sql', givenUp: 'given-up.sql' },
    schema,
  );

export async function locateMissing(
  db: Db,
  transport: Transport,
  where: { schema: string; topic: string; group: string },
): Promise<Whereabouts> {
  const queries = sql(where.schema);
  const query = <R extends Record<string, unknown>>(text: string, params?: unknown[]) =>
    untilUp(() => db.query<R>(text, params), { what: 'auditor' });
  const { rows } = await query<{ id: string }>(queries.missing);
  const missing = new Set(rows.map((row) => row.id));
  if (missing.size === 0) {
    return { missing: 0, pendingOutbox: 0, pendingTopic: 0, lost: 0, deadLettered: 0, refused: 0, givenUp: [] };
  }
  // The topic first: an event the relay published but had not yet deleted from the outbox (killed in between) is on
  // its way to the consumer; the outbox copy is a republish the consumer will deduplicate.
  const onTopic = await findOnTopicPastCommitted(transport, where, missing);
  const rest = [...missing].filter((key) => !onTopic.has(key));
  const inOutbox = new Map<string, Set<string>>();
  if (rest.length > 0) {
    for (const row of (await query<{ key: string; id: string }>(queries.inOutbox, [rest])).rows) {
      inOutbox.set(row.key, (inOutbox.get(row.key) ?? new Set()).add(row.id));
    }
  }
  // An event the group already claimed as applied, yet with no e-mail, would be skipped as a duplicate: gone, not pending.
  const ids = [...onTopic.values(), ...inOutbox.values()].flatMap((set) => [...set]).filter(Boolean);
  const claimed = new Set(
    ids.length === 0
      ? []
      : (await query<{ id: string }>(queries.claimed, [where.group, ids])).rows.map((row) => row.id),
  );
  const pending = (found: Map<string, Set<string>>) =>
    [...found.values()].filter((eventIds) => [...eventIds].some((id) => !claimed.has(id))).length;
  const pendingTopic = pending(onTopic);
  const pendingOutbox = pending(inOutbox);
  // A loss the library explains: given up on (a dead letter, a refused row) rather than vanished.
  const givenUp = (
    await query<{ key: string; how: string; reason: string }>(queries.givenUp, [where.group, [...missing]])
  ).rows;
  return {
    missing: missing.size,
    pendingTopic,
    pendingOutbox,
    lost: missing.size - pendingTopic - pendingOutbox,
    deadLettered: givenUp.filter((row) => row.how === 'dead-letter').length,
    refused: givenUp.filter((row) => row.how === 'refused').length,
    givenUp,
  };
}

/**
 * Reads the topic from the group's committed offsets to its end (with a group of its own, committing nothing) and
 * returns, for each key among `wanted` found there, the event ids (`ce_id`) of its records.
 */
async function findOnTopicPastCommitted(
  transport: Transport,
  where: { topic: string; group: string },
  wanted: Set<string>,
): Promise<Map<string, Set<string>>> {
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
    const found = new Map<string, Set<string>>();
    if (remaining.size === 0) return found;
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
        if (BigInt(record.offset) < from || !key || !wanted.has(key)) continue;
        const eventId = record.headers.ce_id?.toString() ?? '';
        found.set(key, (found.get(key) ?? new Set()).add(eventId));
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
    return found;
  } finally {
    await admin.close();
  }
}
