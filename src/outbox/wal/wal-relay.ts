// The relay that reads the outbox from PostgreSQL's write-ahead log: the table's inserts, streamed through a logical
// replication slot (pgoutput) in commit order, published in that order, deleted once the broker acknowledged them, and
// only then confirmed to the slot. A crash anywhere streams again from the last confirmed transaction: duplicates the
// consumers absorb, never a gap.
import pg from 'pg';
import { defaultDatabaseUrl } from '../../db/pg.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { within } from '../../lifecycle.ts';
import { callBack } from '../../observability/callback.ts';
import { errorFields } from '../../observability/logger.ts';
import { sleep } from '../../observability/sleep.ts';
import { startPublishSpans } from '../../observability/trace-outbox.ts';
import type { OutgoingRecord } from '../../transport/port.ts';
import { producerSlot } from '../producer-slot.ts';
import { publishChunk } from '../publish-chunk.ts';
import type { Relay, RelayOptions } from '../relay-options.ts';
import { relaySettings } from '../relay-settings.ts';
import { relayWatch } from '../relay-stats.ts';
import { sendReplacing } from '../send-replacing.ts';
import { type RefusedEvent, setAside } from '../set-aside.ts';
import { ensureShards } from '../shards-setting.ts';
import { topicLimits } from '../topic-limits.ts';
import { catchUp } from './catch-up.ts';
import { forgetPublished } from './forget.ts';
import { sendsInFlight } from './in-flight.ts';
import { formatLsn, type Lsn, type StreamMessage } from './pgoutput.ts';
import { openReplication, type ReplicationConnection } from './replication.ts';
import {
  assertLogicalReplication,
  ensurePublication,
  readyMark,
  slotInvalidated,
  slotState,
  walNames,
} from './slot.ts';
import { takeSlotTurn } from './slot-turn.ts';
import { type WalRow, walQueue } from './wal-queue.ts';

/** Batches taken and not yet settled, at most: sent (or waiting for the broker) and waiting for their delete. */
const maxUnsettled = 4;

export function createWalRelay(options: RelayOptions, poller: (options: RelayOptions) => Relay): Relay {
  const { schema, shards, batchSize, batchBytes, errorBackoffMs, logger } = relaySettings(options);
  const wal = options.wal ?? {};
  const warnBytes = wal.slotWarnBytes ?? 1024 ** 3;
  const { slot, publication } = walNames(schema, wal.slot);
  const connection: pg.ClientConfig = { connectionString: wal.connectionString ?? defaultDatabaseUrl() };
  const watch = relayWatch(logger);
  const limits = topicLimits(options.maxMessageBytes);
  const { db } = options;
  const producers = producerSlot(options, logger);
  const sql = loadSqlSet(
    import.meta.url,
    {
      refuse: '../relay-refuse.sql',
      pending: '../relay-pending.sql',
      ready: 'wal-ready.sql',
      held: 'wal-held.sql',
    },
    schema,
  );
  const queue = walQueue(schema);
  // Keys with a row set aside in outbox_refused: their later rows stay in the table (see refused-restream.sql).
  const held = new Set<string>();
  const stats = { slot, standby: false, confirmedLsn: null as string | null, lagBytes: 0, lagSeconds: 0 };
  watch.counts.wal = stats;

  const stop = new AbortController();
  let fallback: Relay | undefined;
  let loop: Promise<void> | undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  // The end of the last transaction received (used only by the naive twin `resume-from-received`).
  let received: Lsn = 0n;
  let settlesRunning = 0;

  const toRecord = (row: WalRow): OutgoingRecord => ({
    topic: row.topic,
    key: row.key,
    value: row.payload,
    headers: row.headers,
  });

  /** Publishes rows in the order given (refusals set aside, held keys left in the table), then deletes them. */
  async function publish(rows: WalRow[]): Promise<void> {
    await settle(await send(rows));
  }

  interface Sent {
    published: WalRow[];
    refused: RefusedEvent[];
  }

  /** Sends rows in the order given: refusals set aside, held keys left in the table. */
  async function send(rows: WalRow[]): Promise<Sent> {
    const heldHere = [...new Set(rows.filter((row) => held.has(row.key)).map((row) => row.key))];
    if (heldHere.length > 0) {
      // A key released (retried, discarded) since: its rows come again, written anew after the release.
      const still = new Set((await db.query<{ key: string }>(sql.held, [heldHere])).rows.map((row) => row.key));
      for (const key of heldHere) if (!still.has(key)) held.delete(key);
    }
    const refused: RefusedEvent[] = [];
    const published = await publishChunk(
      rows.filter((row) => !held.has(row.key)),
      {
        send: async (chunk) => {
          // A `publish` span per row that carries a trace, ended with the broker's answer (as the poller's).
          const spans = startPublishSpans('kafka', chunk);
          try {
            await sendReplacing(producers, logger, (producer) => producer.send(chunk.map(toRecord)));
          } catch (error) {
            spans?.end(error);
            throw error;
          }
          spans?.end();
        },
        refuse: async (row, code, error) => {
          held.add(row.key);
          refused.push(await setAside(db, sql.refuse, row, code, error, logger));
        },
        blocked: new Set(),
        logger,
        overtaken: watch.overtook,
        limits,
      },
    );
    return { published, refused };
  }

  /**
   * After the broker's acknowledgement: the rows deleted, then reported. `drain()` waits for every settle running: its
   * rows may be gone from the table while they are not yet counted.
   */
  async function settle({ published, refused }: Sent): Promise<void> {
    settlesRunning++;
    try {
      if (published.length > 0) {
        await options.faults?.('relay:after-publish');
        await forget(published);
      }
      watch.passed({ published: published.length, refused });
    } finally {
      settlesRunning--;
    }
    if (published.length > 0) callBack(logger, 'onPublished', options.onPublished, [published.length]);
    for (const row of refused) callBack(logger, 'onRefused', options.onRefused, [row], { seq: row.seq });
  }

  const forget = (rows: readonly WalRow[]) => forgetPublished(db, schema, rows);

  /** Makes the slot when missing (or when its first catch-up never finished) and publishes what it will not stream. */
  async function prepareSlot(replication: ReplicationConnection): Promise<void> {
    const state = await slotState(db, slot);
    if (state?.walStatus === 'lost') throw slotInvalidated(slot, schema);
    const { rows } = await db.query(`SELECT 1 FROM ${schema}.settings WHERE name = $1`, [readyMark(slot)]);
    if (state && rows.length > 0) {
      if (state.retainedBytes > warnBytes) warnRetained(state.retainedBytes);
      return;
    }
    // A slot whose catch-up was cut short never confirmed anything: made again, it loses nothing.
    if (state) await db.query('SELECT pg_drop_replication_slot($1)', [slot]);
    const created = await replication.createSlot(slot);
    const caughtUp = await catchUp(db, schema, created.snapshot, batchSize, publish);
    await db.query(sql.ready, [readyMark(slot), formatLsn(created.consistentPoint)]);
    logger.info('wal relay created its replication slot', { slot, publishedFromTable: caughtUp });
  }

  function warnRetained(bytes: number): void {
    logger.warn(
      'replication slot holds much WAL; if its relay is retired for good, drop the slot (an abandoned slot keeps ' +
        'WAL for ever: set max_slot_wal_keep_size to bound it)',
      { slot, retainedBytes: bytes },
    );
  }

  /** One session: the slot taken, prepared, then streamed and published until an error or close. */
  async function session(): Promise<void> {
    const lock = new pg.Client(connection);
    lock.on('error', () => undefined);
    let replication: ReplicationConnection | undefined;
    try {
      await lock.connect();
      if (!(await takeSlotTurn(lock, slot, stats, { logger, backoffMs: errorBackoffMs, signal: stop.signal }))) return;
      await ensurePublication(db, schema, publication);
      let broken: Error | undefined;
      replication = await openReplication(connection, (error) => {
        broken ??= error;
        poke();
      });
      const heldNow = await db.query<{ key: string }>(`SELECT DISTINCT key FROM ${schema}.outbox_refused`);
      held.clear();
      for (const row of heldNow.rows) held.add(row.key);
      await prepareSlot(replication);
      queue.reset();
      await stream(replication, () => broken);
    } finally {
      await replication?.close();
      await lock.end().catch(() => undefined);
    }
  }

  async function stream(replication: ReplicationConnection, broken: () => Error | undefined): Promise<void> {
    let confirmed: Lsn = 0n;
    // Batches taken and not yet confirmed (sent, or waiting for the broker); their deletes and confirmations run in
    // order, behind the next sends.
    let unsettled = 0;
    let settling: Promise<void> = Promise.resolve();
    let settleError: { error: unknown } | undefined;
    const flight = sendsInFlight();
    let paused = false;
    let ended: { error?: unknown } | undefined;
    const confirm = (lsn: Lsn) => {
      if (lsn <= confirmed) return;
      confirmed = lsn;
      stats.confirmedLsn = formatLsn(lsn);
      replication.confirm(lsn);
    };
    const onMessage = (message: StreamMessage) => {
      if (message.tag === 'keepalive') {
        // Nothing received is waiting: every change before the server's position is published and confirmed.
        if (unsettled === 0 && queue.idle()) confirm(message.end);
        else if (message.replyRequested) replication.confirm(confirmed);
        return;
      }
      queue.receive(message.message);
      if (message.message.tag !== 'commit') return;
      received = message.message.endLsn;
      if (wal.unsafe === 'confirm-on-receipt') confirm(received);
      if (!paused && queue.size() > batchSize * 8) {
        paused = true;
        replication.pause();
      }
      poke();
    };
    const from = wal.unsafe === 'resume-from-received' ? received : 0n;
    const streaming = replication.stream(slot, publication, onMessage, from).then(
      () => {
        ended = {};
        poke();
      },
      (error: unknown) => {
        ended = { error };
        poke();
      },
    );
    const lag = setInterval(() => void refreshLag(), 5000);
    try {
      while (!stop.signal.aborted && !ended && !broken() && !settleError) {
        const batch = queue.take(batchSize, batchBytes);
        if (paused && queue.size() < batchSize * 2) {
          paused = false;
          replication.resume();
        }
        const oldest = queue.oldestPending();
        stats.lagSeconds = oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
        if (!batch) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 1000);
            wake = () => {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            };
          });
          continue;
        }
        // A key still in an earlier send waits for its answer (a refusal there holds the key's later rows back).
        if (wal.unsafe !== 'send-beside-key-in-flight' && flight.overlaps(batch.rows)) await flight.idle();
        // A failed send ends the session (streamed again from the last confirmed position): nothing more goes out.
        if (settleError || stop.signal.aborted || (flight.failed() && wal.unsafe !== 'send-after-failed-send')) break;
        unsettled++;
        const sending = flight.track(batch.rows, send(batch.rows));
        // Settled in the order taken: a batch's rows deleted and its position confirmed only after every batch before
        // it was, and never after a failure (the session then streams again from the last position confirmed).
        settling = settling.then(async () => {
          try {
            const sent = await sending;
            if (settleError) return;
            await settle(sent);
            if (batch.confirm !== undefined) {
              confirm(batch.confirm);
              queue.confirmed(batch.completed);
            }
          } catch (error) {
            settleError ??= { error };
            poke();
          } finally {
            unsettled--;
          }
        });
        if (unsettled > maxUnsettled) await settling;
      }
    } finally {
      await settling;
      clearInterval(lag);
      await replication.close();
      await streaming;
    }
    const error = settleError?.error ?? broken() ?? ended?.error;
    if (error && !stop.signal.aborted) throw error;
  }

  async function refreshLag(): Promise<void> {
    const state = await slotState(db, slot).catch(() => undefined);
    if (!state) return;
    stats.lagBytes = state.lagBytes;
    if (state.retainedBytes > warnBytes) warnRetained(state.retainedBytes);
  }

  async function run(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        await session();
      } catch (thrown) {
        if (stop.signal.aborted) return;
        // Told apart by the slot's state, not by the server's message: PostgreSQL marks an invalidated slot 'lost'.
        const state = await slotState(db, slot).catch(() => undefined);
        const error = state?.walStatus === 'lost' ? slotInvalidated(slot, schema, thrown) : thrown;
        watch.failed(error);
        if (error !== thrown) {
          logger.error('wal relay cannot stream: its replication slot was invalidated (drop it to recover)', {
            slot,
            ...errorFields(error),
          });
        } else {
          logger.error('wal relay stopped streaming; retrying', errorFields(error));
        }
        await sleep(errorBackoffMs, stop.signal);
      }
    }
  }

  const relay: Relay = {
    start() {
      if (closing) return Promise.reject(new Error('relay is closed'));
      starting ??= (async () => {
        try {
          await assertLogicalReplication(db);
        } catch (error) {
          if (!(error instanceof EffectivelyError && error.code === ErrorCodes.EFF_WAL_UNAVAILABLE)) throw error;
          if (wal.fallback !== 'poll') throw error;
          logger.warn('the server cannot stream the outbox from its WAL; running the poller (fallback: poll)', {
            reason: error.message,
          });
          fallback = poller({ ...options, source: 'poll' });
          return fallback.start();
        }
        await ensureShards(db, schema, shards);
        await producers.current().connect();
        loop = run();
        watch.started({ schema, shards, source: 'wal', slot });
      })();
      const attempt = starting;
      attempt.catch(() => {
        if (starting === attempt && !loop && !fallback) starting = undefined;
      });
      return attempt;
    },
    async drain(timeoutMs = 30_000) {
      await relay.start();
      if (fallback) return fallback.drain(timeoutMs);
      const deadline = Date.now() + timeoutMs;
      const before = watch.counts.published;
      for (;;) {
        const { rows } = await db.query<{ n: string }>(sql.pending);
        const settled = settlesRunning === 0 || wal.unsafe === 'drain-before-counted';
        if ((Number(rows[0]?.n ?? 0) === 0 && queue.idle() && settled) || Date.now() > deadline) {
          return watch.counts.published - before;
        }
        await sleep(20);
      }
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        watch.closed();
        stop.abort();
        poke();
        await starting?.catch(() => undefined);
        if (fallback) return fallback.close({ timeoutMs });
        if (loop && !(await within(loop, timeoutMs))) logger.warn('relay still running at close', { timeoutMs });
        await producers.close();
      })();
      return closing;
    },
    isRunning: () => (fallback ? fallback.isRunning() : watch.isRunning()),
    stats: () => (fallback ? fallback.stats() : { ...watch.stats(), wal: { ...stats } }),
    [Symbol.asyncDispose]() {
      return relay.close();
    },
  };
  return relay;
}
