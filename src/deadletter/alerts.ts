import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';
import type { CloseOptions } from '../lifecycle.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger, stderrLogger } from '../observability/logger.ts';
import { fullJitter, sleep } from '../observability/sleep.ts';
import { countRefused } from '../outbox/refused.ts';

/** `dlq:alert` — the store went from empty to non-empty, or kept growing. Never silent. */
export interface DeadLetterAlert {
  kind: 'non-empty' | 'growing';
  /** What is counted: the `subject` option (default `dead letters`). */
  subject: string;
  /** Dead letters (or whatever `count` counts) waiting now; for `refused outbox rows`, the rows set aside now. */
  dead: number;
  /** New since the last check. */
  added: number;
  schema: string;
  at: string;
}

export interface DeadLetterAlertsOptions {
  db: Db;
  schema?: string;
  /** How often the store is read (default 2000 ms; an alert fires within one interval). */
  everyMs?: number;
  onAlert?: (alert: DeadLetterAlert) => void;
  /** Optional webhook: each alert is POSTed as JSON, retried with backoff up to `webhookAttempts` (default 5). */
  webhookUrl?: string;
  webhookAttempts?: number;
  logger?: Logger;
  /**
   * What is counted (default: dead letters in `schema`'s `dead_letters` table). Give another source to alert on it
   * the same way, e.g. dead effects: `count: (db) => createEffects({ schema }).count(db, 'dead')`.
   */
  count?: (db: Db) => Promise<number>;
  /** Names what is counted in the log line and the alert (default `dead letters`; e.g. `dead effects` with `count`). */
  subject?: string;
  /**
   * Also watch the outbox rows relays set aside because the transport refused them (`outbox_refused`): alerts with the
   * subject `refused outbox rows` when some appear or more come, and the `refused` gauge. Read from the database, so
   * they are seen even when a relay died between its commit and its `onRefused`. Default: true unless `count` is given.
   */
  refused?: boolean;
}

export interface DeadLetterAlerts {
  start(): Promise<void>;
  /** The last count read (a gauge for metrics). */
  readonly dead: number;
  /** Outbox rows set aside at the last check (a gauge; 0 when `refused` is off). */
  readonly refused: number;
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Watches the dead-letter store and tells someone: a callback, a webhook, a gauge, and an error log line. */
export function createDeadLetterAlerts(options: DeadLetterAlertsOptions): DeadLetterAlerts {
  const schema = librarySchema(options.schema);
  const subject = options.subject ?? 'dead letters';
  const everyMs = options.everyMs ?? 2000;
  if (!(everyMs > 0 && everyMs <= 10_000)) throw invalidOptions('everyMs', 'between 1 and 10000 ms');
  const attempts = options.webhookAttempts ?? 5;
  const logger = options.logger ?? stderrLogger;
  const countSql = loadSql(import.meta.url, 'count.sql', schema);
  /** Dead now, and (for the store's own count) letters ever kept: new ones show even while others leave. */
  const count = async (db: Db): Promise<{ dead: number; total?: number }> => {
    if (options.count) return { dead: await options.count(db) };
    const row = (await db.query<{ dead: number; total: string }>(countSql)).rows[0];
    return { dead: Number(row?.dead ?? 0), total: Number(row?.total ?? 0) };
  };
  const watchRefused = options.refused ?? options.count === undefined;
  const stop = new AbortController();
  let dead = 0;
  let refused = 0;
  let refusedMarks = new Set<string>();
  let total: number | undefined;
  let loop: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const deliveries = new Set<Promise<void>>();

  async function post(alert: DeadLetterAlert): Promise<void> {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const response = await fetch(options.webhookUrl!, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(alert),
          signal: AbortSignal.timeout(5000),
        });
        if (response.ok) return;
        logger.warn('dead-letter webhook refused; retrying', { status: response.status, attempt });
      } catch (error) {
        logger.warn('dead-letter webhook failed; retrying', { attempt, ...errorFields(error) });
      }
      if (attempt < attempts) await sleep(fullJitter(attempt, 250, 5000) + 50, stop.signal);
    }
    logger.error('dead-letter webhook gave up', { attempts, dead: alert.dead });
  }

  function raise(alert: DeadLetterAlert): void {
    logger.error(`${alert.subject} ${alert.kind === 'non-empty' ? 'appeared' : 'keep growing'}`, { ...alert });
    callBack(logger, 'onAlert', options.onAlert, [alert]);
    if (options.webhookUrl) {
      const delivery = post(alert);
      deliveries.add(delivery);
      void delivery.finally(() => deliveries.delete(delivery));
    }
  }

  async function check(): Promise<void> {
    const now = await count(options.db);
    // letters kept since the last check, whatever left meanwhile (a net count hid new ones during a redrive)
    const added = now.total !== undefined && total !== undefined ? now.total - total : now.dead - dead;
    if (added > 0 && now.dead > 0) {
      raise({
        kind: dead === 0 ? 'non-empty' : 'growing',
        subject,
        dead: now.dead,
        added,
        schema,
        at: new Date().toISOString(),
      });
    }
    dead = now.dead;
    total = now.total;
    if (watchRefused) await checkRefused();
  }

  /** Rows set aside that the last check did not see (new, or refused again after a retry), whatever left meanwhile. */
  async function checkRefused(): Promise<void> {
    const now = await countRefused(options.db, { schema });
    const added = now.marks.filter((mark) => !refusedMarks.has(mark)).length;
    if (added > 0 && now.refused > 0) {
      raise({
        kind: refused === 0 ? 'non-empty' : 'growing',
        subject: 'refused outbox rows',
        dead: now.refused,
        added,
        schema,
        at: new Date().toISOString(),
      });
    }
    refused = now.refused;
    refusedMarks = new Set(now.marks);
  }

  const alerts: DeadLetterAlerts = {
    async start() {
      loop ??= (async () => {
        while (!stop.signal.aborted) {
          await check().catch((error: unknown) => logger.warn('dead-letter check failed', errorFields(error)));
          await sleep(everyMs, stop.signal);
        }
      })();
    },
    get dead() {
      return dead;
    },
    get refused() {
      return refused;
    },
    close() {
      closing ??= (async () => {
        stop.abort();
        await loop;
        await Promise.allSettled([...deliveries]);
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return alerts.close();
    },
  };
  return alerts;
}
