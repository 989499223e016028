// Redrive jobs: a frozen set of dead-letter ids redriven in the background with the store's own redrive (chunked,
// marked, resumable), at a capped rate, with progress, cancel and history; each start and end in the audit log.
import { redriveTarget } from '../cli/redrive-target.ts';
import type { Db } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';
import { deadLetterStore } from '../deadletter/store.ts';
import { EffectivelyError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { sleep } from '../observability/sleep.ts';
import type { Producer } from '../transport/port.ts';
import type { AuditLog } from './audit.ts';
import type { ConsoleUser } from './auth.ts';

export type JobStatus = 'running' | 'done' | 'cancelled' | 'failed';

export interface JobRequest {
  /** The dead letters to redrive, frozen now: letters failing later are not taken. */
  ids: string[];
  dryRun?: boolean;
  /** `kafka` or `postgres`; default the console's own. */
  transport?: 'kafka' | 'postgres' | undefined;
  /** At most this many letters per second (default: no cap). */
  ratePerSecond?: number | undefined;
  /** Redrive even letters older than their group's dedup retention. */
  force?: boolean;
  /** A name for the history (`group 3f2a… by topic`). */
  label?: string | undefined;
}

/** A later event of the same key was already applied: the redriven one would be applied after it. */
export interface LaterAppliedWarning {
  id: string;
  key: string | null;
  later: number;
  firstOffset: string;
}

export interface RedriveJob {
  id: number;
  label: string;
  by: string;
  dryRun: boolean;
  target: string;
  ratePerSecond: number | null;
  status: JobStatus;
  total: number;
  done: number;
  /** Letters marked redriven by this job (a letter redriven or discarded meanwhile is not). */
  redriven: number;
  warnings: LaterAppliedWarning[];
  /** Whether the later-applied check could run (only where the log is in this database). */
  laterAppliedChecked: boolean;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

const refuseSend = {
  send: () => Promise.reject(new Error('a dry run sends nothing')),
  close: () => Promise.resolve(),
} as unknown as Producer;

export interface JobsOptions {
  db: Db;
  schema: string;
  transport: 'kafka' | 'postgres' | undefined;
  audit: AuditLog;
  logger: Logger;
  /** Letters per step without a rate cap (default 500). */
  chunkSize?: number;
}

export function redriveJobs(options: JobsOptions) {
  const { db, schema, audit } = options;
  const store = deadLetterStore({ schema });
  const laterSql = loadSql(import.meta.url, 'later-applied.sql', schema);
  const jobs = new Map<number, { job: RedriveJob; stop: AbortController; run: Promise<void> }>();
  let next = 1;

  async function laterApplied(ids: string[]): Promise<LaterAppliedWarning[]> {
    const { rows } = await db.query<{ id: string; key: string | null; later: number; first_offset: string }>(laterSql, [
      ids,
    ]);
    return rows.map((row) => ({ id: row.id, key: row.key, later: row.later, firstOffset: row.first_offset }));
  }

  async function send(job: RedriveJob, ids: string[], request: JobRequest, stop: AbortSignal): Promise<void> {
    const target = redriveTarget(db, schema, request.transport ?? options.transport);
    job.target = `${target.name}: ${target.where}`;
    const producer = target.transport.producer({ clientId: 'effectively-console' });
    const step = request.ratePerSecond ? Math.max(1, Math.floor(request.ratePerSecond)) : (options.chunkSize ?? 500);
    try {
      for (let at = 0; at < ids.length && !stop.aborted; at += step) {
        const began = Date.now();
        const chunk = ids.slice(at, at + step);
        const sent = await store.redrive(
          db,
          producer,
          { ids: chunk, limit: chunk.length },
          {
            chunkSize: step,
            force: request.force ?? false,
            signal: stop,
          },
        );
        job.redriven += sent.length;
        job.done = Math.min(ids.length, at + chunk.length);
        if (request.ratePerSecond && at + step < ids.length) await sleep(Math.max(0, began + 1000 - Date.now()), stop);
      }
    } finally {
      await producer.close();
    }
  }

  async function run(job: RedriveJob, request: JobRequest, user: ConsoleUser, stop: AbortController) {
    try {
      if (job.dryRun) {
        const letters = await store.redrive(
          db,
          refuseSend,
          { ids: request.ids, limit: request.ids.length },
          {
            dryRun: true,
            force: request.force ?? false,
          },
        );
        job.redriven = 0;
        job.done = letters.length;
      } else await send(job, request.ids, request, stop.signal);
      job.status = stop.signal.aborted ? 'cancelled' : 'done';
    } catch (error) {
      job.status = 'failed';
      job.error = error instanceof EffectivelyError ? `${error.code}: ${error.message}` : String(error);
      options.logger.warn('console redrive job failed', { job: job.id, error: job.error });
    }
    job.finishedAt = new Date();
    await audit
      .record(user, {
        action: job.dryRun ? 'redrive-dry-run' : 'redrive',
        target: `job ${job.id}: ${job.label} (${job.total} letters)`,
        outcome: job.status,
        details: { job: job.id, redriven: job.redriven, done: job.done, error: job.error, target: job.target },
      })
      .catch((error: unknown) => options.logger.warn('console audit failed', { error: String(error) }));
  }

  return {
    /** Starts a job on `request.ids` (deduplicated, in order) and returns it at once; it runs in the background. */
    async start(request: JobRequest, user: ConsoleUser): Promise<RedriveJob> {
      const ids = [...new Set(request.ids)].filter((id) => /^\d{1,18}$/.test(id));
      // only the `postgres` transport's log is in this database to read; on Kafka it is not checked, and said so
      const checked = (request.transport ?? options.transport) === 'postgres';
      const warnings = checked ? await laterApplied(ids) : [];
      const job: RedriveJob = {
        id: next++,
        label: request.label ?? `${ids.length} selected letters`,
        by: user.name,
        dryRun: request.dryRun ?? false,
        target: request.dryRun ? 'dry run: nothing is sent' : '',
        ratePerSecond: request.ratePerSecond ?? null,
        status: 'running',
        total: ids.length,
        done: 0,
        redriven: 0,
        warnings,
        laterAppliedChecked: checked,
        error: null,
        startedAt: new Date(),
        finishedAt: null,
      };
      await audit.record(user, {
        action: job.dryRun ? 'redrive-dry-run' : 'redrive',
        target: `job ${job.id}: ${job.label} (${job.total} letters)`,
        outcome: 'started',
        details: {
          job: job.id,
          // the ids taken (the first 1,000 of a larger job: the count says how many)
          ids: ids.slice(0, 1000),
          count: ids.length,
          ratePerSecond: job.ratePerSecond,
          force: request.force ?? false,
        },
      });
      const stop = new AbortController();
      const entry = { job, stop, run: Promise.resolve() };
      jobs.set(job.id, entry);
      entry.run = run(job, { ...request, ids }, user, stop);
      return job;
    },
    get(id: number): RedriveJob | undefined {
      return jobs.get(id)?.job;
    },
    /** This process's jobs, newest first. */
    list(): RedriveJob[] {
      return [...jobs.values()].map((entry) => entry.job).reverse();
    },
    /** Stops a running job between steps; what was marked stays marked. False when it was not running. */
    async cancel(id: number, user: ConsoleUser): Promise<boolean> {
      const entry = jobs.get(id);
      if (!entry || entry.job.status !== 'running') return false;
      entry.stop.abort();
      await audit.record(user, { action: 'cancel', target: `job ${id}`, outcome: 'done' });
      return true;
    },
    /** Waits for every job to end (after cancelling them): for close(). */
    async close(): Promise<void> {
      for (const entry of jobs.values()) entry.stop.abort();
      await Promise.allSettled([...jobs.values()].map((entry) => entry.run));
    },
  };
}

export type RedriveJobs = ReturnType<typeof redriveJobs>;
