import { librarySchema } from '../db/identifiers.ts';
import type { Db, Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';
import { type CloseOptions, within } from '../lifecycle.ts';
import { callBack } from '../observability/callback.ts';
import type { FaultInjector } from '../observability/faults.ts';
import { errorFields, type Logger, stderrLogger } from '../observability/logger.ts';
import { maxTimerMs, sleep } from '../observability/sleep.ts';
import { startPublishSpans } from '../observability/trace-outbox.ts';
import type { OutgoingRecord, Producer } from '../transport/port.ts';
import { notifyChannel } from './outbox.ts';
import { producerSlot } from './producer-slot.ts';
import { publishChunk } from './publish-chunk.ts';
import { classifySendFailure, storableText } from './refusal.ts';
import { type RelayStats, relayWatch } from './relay-stats.ts';
import { defaultShards } from './shard.ts';
import { ensureShards, shardsMismatch } from './shards-setting.ts';

export interface RelayOptions {
  db: Db;
  /**
   * Makes the relay's idempotent producer (e.g. `() => transport.producer()`), and a new one when it fails fatally
   * (a fenced producer, librdkafka's fatal error): without it the relay cannot recover until restarted.
   */
  producerFactory?: () => Producer;
  /** A producer to start with (kept for compatibility; prefer `producerFactory`). The relay connects and closes it. */
  producer?: Producer;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /**
   * Key shards; must equal the outbox's `shards` (default 16). Stored in the schema at the first relay start; a relay
   * with another count (or one that finds rows of a higher shard) is refused with EFF_INVALID_OPTIONS.
   */
  shards?: number;
  /** Most rows read and sent at once (default 1000). */
  batchSize?: number;
  /**
   * About the most payload bytes in one chunk (default 32 MiB): rows are taken while the chunk holds less, so a chunk
   * of large rows stays within the Kafka client's local queue (`queue.buffering.max.kbytes`) and the embedded log's
   * parameter size. A single row larger than this still goes, alone.
   */
  batchBytes?: number;
  /** Most chunks of `batchSize` per pass, the next read while the previous is sent (default 4). */
  chunksPerPass?: number;
  /** Fallback poll when no NOTIFY arrives (default 250 ms). */
  pollIntervalMs?: number;
  /** Wait after a failed pass before the next (default 1000 ms). */
  errorBackoffMs?: number;
  /**
   * A pass still running after this many ms is logged as a warning, and again at each further interval (default
   * 60,000): a pass waiting on a silent connection or a stalled broker says so instead of hanging without a word.
   */
  passWarnMs?: number;
  /** Listen for the outbox's NOTIFY (default true when the Db supports it). */
  listen?: boolean;
  logger?: Logger;
  /** Called after rows were acknowledged by the broker and deleted. */
  onPublished?: (count: number) => void;
  /**
   * Called for each row the transport refused for good (too large for its topic, invalid or missing topic...), once
   * it is set aside in `outbox_refused` (logged as an error too): alert on it. Later rows of its key wait until the
   * row is retried (`retryRefused`) or discarded (`discardRefused`).
   */
  onRefused?: (refused: RefusedEvent) => void;
  /** Testing only: named crash points. */
  faults?: FaultInjector;
}

export interface Relay {
  start(): Promise<void>;
  /** Publishes until the outbox is empty (or `timeoutMs` passes); returns how many rows it published. */
  drain(timeoutMs?: number): Promise<number>;
  /** True from a resolved `start()` until `close()`: for a liveness check. */
  isRunning(): boolean;
  /** Published and refused since start, and failing passes in a row (0 when healthy): for a readiness check. */
  stats(): RelayStats;
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface RefusedEvent {
  seq: string;
  id: string;
  topic: string;
  key: string;
  /** The transport's code (`ERR_MSG_SIZE_TOO_LARGE`, `ERR_TOPIC_EXCEPTION`, a SQLSTATE, an `EFF_*` code). */
  errorCode: string;
  reason: string;
}

interface OutboxRow extends Record<string, unknown> {
  seq: string;
  topic: string;
  key: string;
  headers: Record<string, string>;
  /** base64 */
  payload: string | null;
  /** Payload bytes. */
  size: number;
}

/**
 * Publishes outbox rows through an idempotent producer and deletes them only after the broker acknowledged them.
 * A crash between the two republishes the batch (a duplicate the consumers absorb); nothing is lost.
 */
export function createRelay(options: RelayOptions): Relay {
  const schema = librarySchema(options.schema);
  const shards = options.shards ?? defaultShards;
  const batchSize = options.batchSize ?? 1000;
  const chunksPerPass = options.chunksPerPass ?? 4;
  const batchBytes = options.batchBytes ?? 32 * 1024 * 1024;
  if (!(Number.isSafeInteger(batchBytes) && batchBytes > 0)) throw invalidOptions('batchBytes', 'a positive integer');
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const errorBackoffMs = options.errorBackoffMs ?? 1000;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidOptions('batchSize', 'a positive integer');
  // A timer past maxTimerMs fires after 1 ms: the relay would poll in a busy loop.
  if (!(pollIntervalMs > 0 && pollIntervalMs <= maxTimerMs))
    throw invalidOptions('pollIntervalMs', `a positive number of ms up to ${maxTimerMs}`);
  const passWarnMs = options.passWarnMs ?? 60_000;
  if (!(passWarnMs > 0 && passWarnMs <= maxTimerMs)) throw invalidOptions('passWarnMs', 'a positive number of ms');
  const logger = options.logger ?? stderrLogger;
  const watch = relayWatch(logger);
  const { db } = options;
  const producers = producerSlot(options, logger);
  const sql = loadSqlSet(
    import.meta.url,
    {
      claim: 'relay-claim.sql',
      fetch: 'relay-fetch.sql',
      remove: 'relay-delete.sql',
      refuse: 'relay-refuse.sql',
      pending: 'relay-pending.sql',
    },
    schema,
  );
  const lockSpace = `effectively:relay:${schema}`;
  const sameDatabase = () => producers.current().usesDb?.(db) ?? false;

  const stop = new AbortController();
  let wake: (() => void) | undefined;
  // A NOTIFY that lands while a pass runs is remembered, so its rows are taken at once rather than at the next poll.
  let notified = false;
  let loop: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  const toRecord = (row: OutboxRow): OutgoingRecord => ({
    topic: row.topic,
    key: row.key,
    value: row.payload === null ? null : Buffer.from(row.payload, 'base64'),
    headers: row.headers,
  });

  /**
   * Sends through the current producer (see `send`); one that failed fatally is replaced (through `producerFactory`) and the send
   * tried again. A log in this same database takes the records in the pass's transaction, under a savepoint so a
   * refused send leaves the transaction usable.
   */
  async function send(tx: Queryable, rows: readonly OutboxRow[]): Promise<void> {
    // A `publish` span per row that carries a trace, ended with the transport's answer (the log in PostgreSQL is the
    // producer that knows databases).
    const spans = startPublishSpans(producers.current().usesDb ? 'effectively' : 'kafka', rows);
    try {
      await sendOnce(tx, rows);
    } catch (error) {
      spans?.end(error);
      throw error;
    }
    spans?.end();
  }

  async function sendOnce(tx: Queryable, rows: readonly OutboxRow[]): Promise<void> {
    const records = rows.map(toRecord);
    for (let attempt = 1; ; attempt++) {
      const producer = producers.current();
      try {
        if (sameDatabase() && producer.sendWithin) {
          await tx.query('SAVEPOINT effectively_relay_send');
          try {
            await producer.sendWithin(tx, records);
          } catch (error) {
            await tx.query('ROLLBACK TO SAVEPOINT effectively_relay_send');
            // What the producer remembers of the rolled-back work (a topic it created) is gone: start a fresh one.
            await producers.replace(producer, false);
            throw error;
          }
          await tx.query('RELEASE SAVEPOINT effectively_relay_send');
        } else {
          await producer.send(records);
        }
        return;
      } catch (error) {
        if (classifySendFailure(error).failure !== 'fatal' || attempt >= 3) throw error;
        logger.warn('relay producer failed fatally; replacing it', errorFields(error));
        if (!(await producers.replace(producer, true))) throw error;
      }
    }
  }

  async function refuse(tx: Queryable, row: OutboxRow, code: string, error: unknown): Promise<RefusedEvent> {
    const reason = storableText(error instanceof Error ? error.message : String(error));
    const { rows } = await tx.query<{ id: string }>(sql.refuse, [row.seq, code, reason]);
    const id = rows[0]?.id ?? '';
    const refused = { seq: String(row.seq), id, topic: row.topic, key: row.key, errorCode: code, reason };
    logger.error('relay set aside an outbox row the transport refused; later rows of its key wait', { ...refused });
    return refused;
  }

  /**
   * One pass: claim free shards, then up to `chunksPerPass` chunks of their oldest rows, each sent (and acknowledged)
   * before the next is sent, while the next is already being read; the rows are deleted after the last
   * acknowledgement, all in one transaction. Rows the transport refuses for good are set aside in that transaction.
   */
  async function pass(): Promise<{ published: number; refused: RefusedEvent[]; full: boolean }> {
    return db.transaction(async (tx) => {
      const { rows: owned } = await tx.query<{ shard: number; stored: string | null }>(sql.claim, [shards, lockSpace]);
      const mismatch = owned.find((row) => row.shard === -1);
      if (mismatch) throw shardsMismatch(schema, shards, String(mismatch.stored));
      if (owned.length === 0) return { published: 0, refused: [], full: false };
      const shardList = owned.map((row) => row.shard);
      const fetch = (fromSeq: string) => tx.query<OutboxRow>(sql.fetch, [shardList, batchSize, fromSeq, batchBytes]);
      const sent: string[] = [];
      const refused: RefusedEvent[] = [];
      const blocked = new Set<string>();
      const deps = {
        send: (rows: readonly OutboxRow[]) => send(tx, rows),
        refuse: async (row: OutboxRow, code: string, error: unknown) => {
          refused.push(await refuse(tx, row, code, error));
        },
        blocked,
      };
      let chunk = (await fetch('0')).rows;
      // A chunk cut by its row or byte budget: rows may follow (read in this pass, or at once in the next).
      const cut = (rows: readonly OutboxRow[]) =>
        rows.length === batchSize || rows.reduce((sum, row) => sum + Number(row.size), 0) >= batchBytes;
      let full = false;
      for (let index = 0; chunk.length > 0; index++) {
        full = cut(chunk);
        const more = full && index + 1 < chunksPerPass;
        const nextSeq = (BigInt(chunk.at(-1)!.seq) + 1n).toString();
        // The next read runs while this chunk is sent; its failure is handled here at once (a database that drops
        // during a send must not leave a rejection nobody listens to) and surfaces when it is awaited below.
        const reading = more && !sameDatabase() ? fetch(nextSeq) : undefined;
        reading?.catch(() => undefined);
        const published = await publishChunk(chunk, deps);
        for (const row of published) sent.push(row.seq);
        chunk = reading ? (await reading).rows : more ? (await fetch(nextSeq)).rows : [];
      }
      if (sent.length > 0) {
        await options.faults?.('relay:after-publish');
        await tx.query(sql.remove, [sent]);
      }
      return { published: sent.length, refused, full };
    });
  }

  function report(result: { published: number; refused: RefusedEvent[] }): void {
    watch.passed(result);
    // Committed whatever the callbacks do: their failure must not look like a failed pass.
    if (result.published > 0) callBack(logger, 'onPublished', options.onPublished, [result.published]);
    for (const refused of result.refused)
      callBack(logger, 'onRefused', options.onRefused, [refused], { seq: refused.seq });
  }

  async function run(): Promise<void> {
    while (!stop.signal.aborted) {
      let full = false;
      notified = false;
      const started = Date.now();
      const watchdog = setInterval(() => {
        logger.warn('relay pass still running', { runningMs: Date.now() - started });
      }, passWarnMs);
      try {
        const result = await pass().finally(() => clearInterval(watchdog));
        full = result.full;
        report(result);
      } catch (error) {
        if (stop.signal.aborted) return;
        watch.failed(error);
        logger.error('relay pass failed; retrying', errorFields(error));
        await sleep(errorBackoffMs, stop.signal);
        continue;
      }
      if (full || notified) continue;
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
        await ensureShards(db, schema, shards);
        await producers.current().connect();
        if ((options.listen ?? true) && db.listen) {
          unlisten = await db.listen(notifyChannel(schema), () => {
            notified = true;
            wake?.();
          });
        }
        loop = run();
        watch.started({ schema, shards, listen: unlisten !== undefined });
      })();
      // A start that failed (the database or the broker down) can be tried again on the same relay.
      const attempt = starting;
      attempt.catch(() => {
        if (starting === attempt && !loop) starting = undefined;
      });
      return attempt;
    },
    async drain(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      await ensureShards(db, schema, shards);
      await producers.current().connect();
      let total = 0;
      for (;;) {
        const result = await pass();
        report(result);
        const published = result.published;
        total += published;
        if (published === 0) {
          // Rows held behind a refused row of their key do not count: they wait for an operator.
          const { rows } = await db.query<{ n: string }>(sql.pending);
          if (Number(rows[0]?.n ?? 0) === 0 || Date.now() > deadline) return total;
          await sleep(20);
        }
      }
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        watch.closed();
        stop.abort();
        wake?.();
        await starting?.catch(() => undefined);
        if (loop && !(await within(loop, timeoutMs))) logger.warn('relay pass still running at close', { timeoutMs });
        await unlisten?.();
        await producers.close();
      })();
      return closing;
    },
    isRunning: watch.isRunning,
    stats: watch.stats,
    [Symbol.asyncDispose]() {
      return relay.close();
    },
  };
  return relay;
}
