// What a running relay tells its operator: a line at start, and `stats()` / `isRunning()` for a health check (the
// pipeline and the sender have theirs).
import { errorFields, type Logger } from '../observability/logger.ts';

export interface RelayStats {
  /** Started and not closed. */
  running: boolean;
  /** Outbox rows published since start. */
  published: number;
  /** Rows set aside since start because the transport refused them for good (`effectively outbox refused`). */
  refused: number;
  /**
   * Rows the broker wrote since start ahead of an earlier row of their key that failed in the same send: the key's
   * order is broken on the topic (each is logged as an `EFF_KEY_OVERTAKEN` error). 0 is the healthy value.
   */
  overtaken: number;
  /** Passes in a row that failed (the database or the broker down): 0 when the last pass went through. */
  failingPasses: number;
  /** When a pass last published something; null before the first. */
  lastPublishedAt: Date | null;
  /** The last failed pass's error message; null once a pass went through. */
  lastError: string | null;
  /** `source: 'wal'` only: the slot's position and lag. */
  wal?: WalStats;
}

export interface WalStats {
  slot: string;
  /** Another relay streams from the slot; this one waits to take over. */
  standby: boolean;
  /** The last position confirmed to the server (everything before it was acknowledged by the broker). */
  confirmedLsn: string | null;
  /** Bytes the server wrote past the confirmed position (read every few seconds). */
  lagBytes: number;
  /** Seconds since the oldest transaction received and not yet confirmed committed (0 when none). */
  lagSeconds: number;
}

export function relayWatch(logger: Logger) {
  const counts: RelayStats = {
    running: false,
    published: 0,
    refused: 0,
    overtaken: 0,
    failingPasses: 0,
    lastPublishedAt: null,
    lastError: null,
  };
  return {
    started(fields: Record<string, unknown>): void {
      counts.running = true;
      logger.info('relay started', fields);
    },
    passed(result: { published: number; refused: readonly unknown[] }): void {
      counts.failingPasses = 0;
      counts.lastError = null;
      counts.published += result.published;
      counts.refused += result.refused.length;
      if (result.published > 0) counts.lastPublishedAt = new Date();
    },
    /** Rows of a failed send written ahead of an earlier row of their key (counted whether the pass commits or not). */
    overtook(count: number): void {
      counts.overtaken += count;
    },
    failed(error: unknown): void {
      counts.failingPasses++;
      counts.lastError = String(errorFields(error).error);
    },
    closed(): void {
      counts.running = false;
    },
    isRunning: (): boolean => counts.running,
    stats: (): RelayStats => ({ ...counts }),
    counts,
  };
}
