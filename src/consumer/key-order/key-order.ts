import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { decodeHeaders, encodeHeaders } from '../../db/storable.ts';
import type { Event } from '../../envelope/event.ts';
import { dedupKeyOf } from '../../envelope/identity.ts';
import { keyId } from '../../transport/key.ts';
import type { IncomingRecord } from '../../transport/port.ts';

const files = {
  holds: 'holds.sql',
  park: 'park.sql',
  hold: 'hold.sql',
  release: 'release.sql',
  released: 'released.sql',
  nextParked: 'next-parked.sql',
  unpark: 'unpark.sql',
  dropHold: 'drop-hold.sql',
  lockHold: 'lock-hold.sql',
  isParked: 'is-parked.sql',
};

interface ParkedRow extends Record<string, unknown> {
  id: string | null;
  partition: number | null;
  offset: string | null;
  headers: Record<string, string> | null;
  payload: Buffer | null;
  key_bytes: Buffer | null;
  ts: number | null;
}

/** Keys up to this many bytes are held under their base64 form; longer ones under a digest (an index entry is ~2.7 KB at most). */
const longKeyBytes = 512;

/**
 * The form a key is held and parked under: base64 of its bytes, or for a long key `sha256:` and the hex digest of its
 * bytes (never a base64 form: `:` is not in the base64 alphabet). A hostile key of any length becomes a hold.
 */
export function holdKey(key: Buffer): string {
  return key.length <= longKeyBytes ? keyId(key) : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** A parked record handed back by `nextParked`, with the id to `unpark` once it was dealt with. */
export interface Parked {
  id: string;
  record: IncomingRecord;
}

/**
 * Key-ordered retries. While a record of key K is in retry or dead (the holder), later records of K from the main topic
 * are parked in `parked_records` inside the batch's transaction instead of overtaking it; their offsets move on since
 * the database holds them. When the holder is applied (from a retry topic, or redriven) or discarded, the hold is
 * released and the parked records are applied in their order, one transaction each, before the hold goes. A parked
 * record that fails becomes the new holder. Holds and parks take row locks on the hold, so a drain and a batch of the
 * same key never interleave.
 */
export class KeyOrder {
  readonly #sql: Record<keyof typeof files, string>;

  constructor(
    schema: string,
    readonly group: string,
  ) {
    this.#sql = loadSqlSet(import.meta.url, files, schema);
  }

  /**
   * In the batch's transaction: parks the records whose key is held by another event; returns their indexes. The holder
   * itself (a redrive) passes and is applied, which releases the hold.
   */
  async park(tx: Queryable, topic: string, items: { event: Event; record: IncomingRecord }[]): Promise<Set<number>> {
    const keys = [...new Set(items.flatMap(({ record }) => (record.key ? [holdKey(record.key)] : [])))];
    const parked = new Set<number>();
    if (keys.length === 0) return parked;
    const { rows } = await tx.query<{ key: string; holder: string }>(this.#sql.holds, [this.group, topic, keys]);
    if (rows.length === 0) return parked;
    const holders = new Map(rows.map((row) => [row.key, row.holder]));
    for (const [index, { event, record }] of items.entries()) {
      const key = record.key ? holdKey(record.key) : undefined;
      const holder = key === undefined ? undefined : holders.get(key);
      if (holder === undefined || holder === dedupKeyOf(event)) continue;
      await tx.query(this.#sql.park, [
        this.group,
        topic,
        key,
        record.partition,
        record.offset,
        dedupKeyOf(event),
        encodeHeaders(record.headers),
        record.value,
        record.key,
      ]);
      parked.add(index);
    }
    return parked;
  }

  /** In the transaction that gave up on (forwarded or dead-lettered) a record of the main topic: holds its key. */
  async hold(tx: Queryable, record: IncomingRecord, eventId: string): Promise<void> {
    if (record.key) await tx.query(this.#sql.hold, [this.group, record.topic, holdKey(record.key), eventId]);
  }

  /** In the transaction that applied `eventIds`: the holds they were holders of are released. */
  async release(tx: Queryable, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    return (await tx.query(this.#sql.release, [this.group, eventIds])).rowCount ?? 0;
  }

  /** Released holds with records still to apply. */
  async released(db: Queryable): Promise<{ topic: string; key: string }[]> {
    return (await db.query<{ topic: string; key: string }>(this.#sql.released, [this.group])).rows;
  }

  /**
   * In a drain transaction: locks a released hold and returns its oldest parked record; when nothing is parked any more
   * the hold is dropped and `undefined` returned. Undefined as well when the hold is gone or held again.
   */
  async nextParked(tx: Queryable, topic: string, key: string): Promise<Parked | undefined> {
    const { rows } = await tx.query<ParkedRow>(this.#sql.nextParked, [this.group, topic, key]);
    const row = rows[0];
    if (!row) return undefined;
    if (row.id === null) {
      await tx.query(this.#sql.dropHold, [this.group, topic, key]);
      return undefined;
    }
    const headers = decodeHeaders(row.headers);
    return {
      id: row.id,
      record: {
        topic,
        partition: row.partition!,
        offset: row.offset!,
        // Rows parked before key_bytes existed hold a base64 key.
        key: row.key_bytes ?? Buffer.from(key, 'base64'),
        value: row.payload,
        headers,
        timestamp: row.ts ?? Date.now(),
      },
    };
  }

  /**
   * In the transaction that gives up on a parked record after its drain step rolled back: whether it is still parked.
   * The rollback released the hold's lock, and another member's drainer may have applied the record meanwhile: giving
   * up on it then would dead-letter an applied event and hold its key for good.
   */
  async stillParked(tx: Queryable, parked: { parkedId: string; record: IncomingRecord }): Promise<boolean> {
    const { record } = parked;
    if (record.key) await tx.query(this.#sql.lockHold, [this.group, record.topic, holdKey(record.key)]);
    const { rows } = await tx.query<{ parked: boolean }>(this.#sql.isParked, [parked.parkedId]);
    return rows[0]?.parked === true;
  }

  async unpark(tx: Queryable, id: string): Promise<void> {
    await tx.query(this.#sql.unpark, [id]);
  }
}
