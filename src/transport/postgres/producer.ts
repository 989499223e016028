import { byteaArray } from '../../db/bytea-array.ts';
import type { Db, Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { isStorable } from '../../db/storable.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { keyId, keyText } from '../key.ts';
import type { OutgoingRecord, Producer } from '../port.ts';
import { encodeHeaders, partitionOf } from './codec.ts';

/** A key's text when it is lossless UTF-8 without NUL (the `key` column), else null: then its bytes are kept. */
function textKey(key: string | Buffer | null): string | null {
  if (key === null) return null;
  return typeof key === 'string' ? (!isStorable(key) ? null : key) : keyText(key);
}

/** The key's bytes when it cannot be kept as text (the `key_bytes` column). */
function bytesKey(key: string | Buffer | null): Buffer | null {
  if (key === null || textKey(key) !== null) return null;
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
}

/** What the partitioner hashes: the text, or the base64 of bytes that are not text. */
function partitionKey(key: string | Buffer | null): string | null {
  const bytes = bytesKey(key);
  return bytes === null ? textKey(key) : keyId(bytes);
}

import type { ResolvedPostgresOptions } from './options.ts';

/**
 * About the most record bytes one append statement carries: a send of hundreds of large records goes in several
 * statements (same transaction, consecutive offsets), so no single message to the server grows with the send.
 */
const appendBytes = 16 * 1024 * 1024;

/** The records in order, cut into runs of about `appendBytes` (a run holds one record at least). */
function* slices(records: readonly OutgoingRecord[]): Generator<OutgoingRecord[]> {
  let run: OutgoingRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = (record.value?.length ?? 0) + (record.key?.length ?? 0) + headerBytes(record);
    if (run.length > 0 && bytes + size > appendBytes) {
      yield run;
      run = [];
      bytes = 0;
    }
    run.push(record);
    bytes += size;
  }
  if (run.length > 0) yield run;
}

function headerBytes(record: OutgoingRecord): number {
  let size = 0;
  for (const [name, value] of Object.entries(record.headers)) size += name.length + value.length;
  return size;
}

const files = { ensureTopic: 'sql/ensure-topic.sql', reserve: 'sql/reserve.sql', append: 'sql/append.sql' };

/**
 * Appends to the log in one transaction per `send`: all records or none. Partitions are locked in a fixed order
 * (topic, partition) so concurrent senders cannot deadlock.
 */
export class PostgresProducer implements Producer {
  readonly #options: ResolvedPostgresOptions;
  readonly #sql: Record<keyof typeof files, string>;
  readonly #partitions = new Map<string, number>();
  #closed = false;

  constructor(options: ResolvedPostgresOptions) {
    this.#options = options;
    this.#sql = loadSqlSet(import.meta.url, files, options.schema);
  }

  async connect(): Promise<void> {}

  async send(records: readonly OutgoingRecord[]): Promise<void> {
    if (this.#closed) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'producer is closed');
    if (records.length === 0) return;
    await this.#options.db.transaction((tx) => this.sendWithin(tx, records));
  }

  usesDb(db: Db): boolean {
    return db === this.#options.db;
  }

  /**
   * Appends in the caller's transaction. Topics are taken in order, and each topic's partitions in order, so locks go
   * in the fixed (topic, partition) order. A topic's partition count is remembered, and checked by each reservation:
   * a topic deleted and created again with another count is partitioned again by its count of now, or one key would
   * land on two partitions.
   */
  async sendWithin(tx: Queryable, records: readonly OutgoingRecord[]): Promise<void> {
    if (this.#closed) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'producer is closed');
    const byTopic = new Map<string, OutgoingRecord[]>();
    for (const record of records) {
      const list = byTopic.get(record.topic) ?? [];
      list.push(record);
      byTopic.set(record.topic, list);
    }
    for (const topic of [...byTopic.keys()].sort()) await this.#appendTopic(tx, topic, byTopic.get(topic)!);
  }

  /** One topic's records; retried once with the count read afresh when the remembered one is no longer true. */
  async #appendTopic(tx: Queryable, topic: string, records: OutgoingRecord[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const partitions = this.#partitions.get(topic) ?? (await this.#ensureTopic(tx, topic));
      if (await this.#appendPartitioned(tx, topic, partitions, records)) return;
      this.#partitions.delete(topic);
      if (attempt > 0) {
        throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `topic ${topic} changed while records were appended`, {
          retryable: true,
        });
      }
    }
  }

  async #ensureTopic(tx: Queryable, topic: string): Promise<number> {
    const { rows } = await tx.query<{ partitions: number }>(this.#sql.ensureTopic, [
      topic,
      this.#options.defaultPartitions,
    ]);
    const partitions = rows[0]!.partitions;
    this.#partitions.set(topic, partitions);
    return partitions;
  }

  /**
   * Appends a topic's records by `partitions`; false (nothing appended) when the topic no longer has that many. Only
   * the first reservation can find that: once it holds a partition's row, the topic cannot change until the commit.
   */
  async #appendPartitioned(
    tx: Queryable,
    topic: string,
    partitions: number,
    records: OutgoingRecord[],
  ): Promise<boolean> {
    const groups = new Map<number, OutgoingRecord[]>();
    for (const record of records) {
      const partition = partitionOf(partitionKey(record.key), partitions);
      const group = groups.get(partition);
      if (group) group.push(record);
      else groups.set(partition, [record]);
    }
    for (const partition of [...groups.keys()].sort((a, b) => a - b)) {
      const batch = groups.get(partition)!;
      const { rows } = await tx.query<{ first: string }>(this.#sql.reserve, [
        topic,
        partition,
        batch.length,
        partitions,
      ]);
      if (rows.length === 0) return false;
      let first = BigInt(rows[0]!.first);
      for (const slice of slices(batch)) {
        await tx.query(this.#sql.append, [
          topic,
          partition,
          first.toString(),
          slice.map((record) => textKey(record.key)),
          slice.map((record) => encodeHeaders(record.headers)),
          byteaArray(slice.map((record) => record.value)),
          byteaArray(slice.map((record) => bytesKey(record.key))),
        ]);
        first += BigInt(slice.length);
      }
    }
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
