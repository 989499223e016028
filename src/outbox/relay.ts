import { assertIdentifier } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';
import { type CloseOptions, within } from '../lifecycle.ts';
import type { FaultInjector } from '../observability/faults.ts';
import { errorFields, type Logger, stderrLogger } from '../observability/logger.ts';
import { sleep } from '../observability/sleep.ts';
import type { OutgoingRecord, Producer } from '../transport/port.ts';
import { notifyChannel } from './outbox.ts';
import { defaultShards } from './shard.ts';

export interface RelayOptions {
  db: Db;
  /** An idempotent producer (from a transport); the relay connects it and closes it. */
  producer: Producer;
  /** Schema of the library's tables (default `effectively`). */
  schema?: string;
  /** Key shards; must equal the outbox's `shards` (default 16). */
  shards?: number;
  /** Most rows read and sent at once (default 1000). */
  batchSize?: number;
  /** Most chunks of `batchSize` per pass, the next read while the previous is sent (default 4). */
  chunksPerPass?: number;
  /** Fallback poll when no NOTIFY arrives (default 250 ms). */
  pollIntervalMs?: number;
  /** Wait after a failed pass before the next (default 1000 ms). */
  errorBackoffMs?: number;
  /** Listen for the outbox's NOTIFY (default true when the Db supports it). */
  listen?: boolean;
  logger?: Logger;
  /** Called after rows were acknowledged by the broker and deleted. */
  onPublished?: (count: number) => void;
  /** Testing only: named crash points. */
  faults?: FaultInjector;
}

export interface Relay {
  start(): Promise<void>;
  /** Publishes until the outbox is empty (or `timeoutMs` passes); returns how many rows it published. */
  drain(timeoutMs?: number): Promise<number>;
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface OutboxRow extends Record<string, unknown> {
  seq: string;
  topic: string;
  key: string;
  headers: Record<string, string>;
  /** base64 */
  payload: string | null;
}

/**
 * Publishes outbox rows through an idempotent producer and deletes them only after the broker acknowledged them.
 * A crash between the two republishes the batch (a duplicate the consumers absorb); nothing is lost.
 */
export function createRelay(options: RelayOptions): Relay {
  const schema = assertIdentifier(options.schema ?? 'effectively', 'schema');
  const shards = options.shards ?? defaultShards;
  const batchSize = options.batchSize ?? 1000;
  const chunksPerPass = options.chunksPerPass ?? 4;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const errorBackoffMs = options.errorBackoffMs ?? 1000;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidOptions('batchSize', 'a positive integer');
  if (!(pollIntervalMs > 0)) throw invalidOptions('pollIntervalMs', 'a positive number');
  const logger = options.logger ?? stderrLogger;
  const { db, producer } = options;
  const sql = loadSqlSet(
    import.meta.url,
    { claim: 'relay-claim.sql', fetch: 'relay-fetch.sql', remove: 'relay-delete.sql' },
    schema,
  );
  const lockSpace = `effectively:relay:${schema}`;
  const sameDatabase = producer.usesDb?.(db) ?? false;

  const stop = new AbortController();
  let wake: (() => void) | undefined;
  // A NOTIFY that lands while a pass runs is remembered, so its rows are taken at once rather than at the next poll.
  let notified = false;
  let loop: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  /**
   * One pass: claim free shards, then up to `chunksPerPass` chunks of their oldest rows, each sent (and acknowledged)
   * before the next is sent, while the next is already being read; the rows are deleted after the last
   * acknowledgement, all in one transaction.
   */
  async function pass(): Promise<number> {
    return db.transaction(async (tx) => {
      const { rows: owned } = await tx.query<{ shard: number }>(sql.claim, [shards, lockSpace]);
      if (owned.length === 0) return 0;
      const shardList = owned.map((row) => row.shard);
      const fetch = (fromSeq: string) => tx.query<OutboxRow>(sql.fetch, [shardList, batchSize, fromSeq]);
      const sent: string[] = [];
      let chunk = (await fetch('0')).rows;
      for (let index = 0; chunk.length > 0; index++) {
        const records: OutgoingRecord[] = chunk.map((row) => ({
          topic: row.topic,
          key: row.key,
          value: row.payload === null ? null : Buffer.from(row.payload, 'base64'),
          headers: row.headers,
        }));
        const more = chunk.length === batchSize && index + 1 < chunksPerPass;
        const nextSeq = (BigInt(chunk.at(-1)!.seq) + 1n).toString();
        // A log in this same database takes the records in this transaction: moved, not copied, in one commit.
        const sending = sameDatabase && producer.sendWithin ? producer.sendWithin(tx, records) : producer.send(records);
        const reading = more && !sameDatabase ? fetch(nextSeq) : undefined;
        await sending;
        for (const row of chunk) sent.push(row.seq);
        chunk = reading ? (await reading).rows : more ? (await fetch(nextSeq)).rows : [];
      }
      if (sent.length === 0) return 0;
      await options.faults?.('relay:after-publish');
      await tx.query(sql.remove, [sent]);
      return sent.length;
    });
  }

  async function run(): Promise<void> {
    while (!stop.signal.aborted) {
      let published = 0;
      notified = false;
      try {
        published = await pass();
        if (published > 0) options.onPublished?.(published);
      } catch (error) {
        if (stop.signal.aborted) return;
        logger.error('relay pass failed; retrying', errorFields(error));
        await sleep(errorBackoffMs, stop.signal);
        continue;
      }
      if (published >= batchSize * chunksPerPass || notified) continue;
      // Until a NOTIFY, the poll interval, or close; whichever comes first clears the others (no pending timers pile up).
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          stop.signal.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, pollIntervalMs);
        stop.signal.addEventListener('abort', done, { once: true });
        wake = done;
      });
    }
  }

  const relay: Relay = {
    start() {
      if (closing) return Promise.reject(new Error('relay is closed'));
      starting ??= (async () => {
        await producer.connect();
        if ((options.listen ?? true) && db.listen) {
          unlisten = await db.listen(notifyChannel(schema), () => {
            notified = true;
            wake?.();
          });
        }
        loop = run();
      })();
      return starting;
    },
    async drain(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      await producer.connect();
      let total = 0;
      for (;;) {
        const published = await pass();
        total += published;
        if (published === 0) {
          const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
          if (Number(rows[0]?.n ?? 0) === 0 || Date.now() > deadline) return total;
          await sleep(20);
        }
      }
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        stop.abort();
        wake?.();
        await starting?.catch(() => undefined);
        if (loop && !(await within(loop, timeoutMs))) logger.warn('relay pass still running at close', { timeoutMs });
        await unlisten?.();
        await producer.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return relay.close();
    },
  };
  return relay;
}
