import type { Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';
import { within } from '../lifecycle.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields } from '../observability/logger.ts';
import { maxTimerMs, sleep } from '../observability/sleep.ts';
import { startPublishSpans } from '../observability/trace-outbox.ts';
import type { OutgoingRecord } from '../transport/port.ts';
import { notifyChannel } from './outbox.ts';
import { producerSlot } from './producer-slot.ts';
import { publishChunk } from './publish-chunk.ts';
import type { Relay, RelayOptions } from './relay-options.ts';
import { relaySettings } from './relay-settings.ts';
import { relayWatch } from './relay-stats.ts';
import { sendReplacing } from './send-replacing.ts';
import { type RefusedEvent, setAside } from './set-aside.ts';
import { ensureShards, shardsMismatch } from './shards-setting.ts';
import { topicLimits } from './topic-limits.ts';
import { createWalRelay } from './wal/wal-relay.ts';

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
export type { RefusedEvent, Relay, RelayOptions };

export function createRelay(options: RelayOptions): Relay {
  if (options.source === 'wal') return createWalRelay(options, createRelay);
  if (options.source !== undefined && options.source !== 'poll') throw invalidOptions('source', "'poll' or 'wal'");
  const { schema, shards, batchSize, batchBytes, errorBackoffMs, logger } = relaySettings(options);
  const chunksPerPass = options.chunksPerPass ?? 4;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  // A timer past maxTimerMs fires after 1 ms: the relay would poll in a busy loop.
  if (!(pollIntervalMs > 0 && pollIntervalMs <= maxTimerMs))
    throw invalidOptions('pollIntervalMs', `a positive number of ms up to ${maxTimerMs}`);
  const passWarnMs = options.passWarnMs ?? 60_000;
  if (!(passWarnMs > 0 && passWarnMs <= maxTimerMs)) throw invalidOptions('passWarnMs', 'a positive number of ms');
  const watch = relayWatch(logger);
  const limits = topicLimits(options.maxMessageBytes);
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
    await sendReplacing(producers, logger, async (producer) => {
      if (!(sameDatabase() && producer.sendWithin)) return producer.send(records);
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
    });
  }

  const refuse = (tx: Queryable, row: OutboxRow, code: string, error: unknown) =>
    setAside(tx, sql.refuse, row, code, error, logger);

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
        logger,
        overtaken: watch.overtook,
        limits,
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
