// How a chaos run ends: complete (exit 0), failed (something lost or applied twice: exit 1), or incomplete (stopped
// before every event was delivered, nothing provably lost: exit 2). "Lost" is only what the auditor found nowhere.
import { recoveryLines } from './recovery.ts';
import type { ChaosResult } from './run.ts';

export interface Ending {
  lines: string[];
  exitCode: 0 | 1 | 2;
}

/** The recovery lines (one per killed role), then the verdict. */
export function ending(result: ChaosResult): Ending {
  const verdict = endingVerdict(result);
  return {
    ...verdict,
    lines: [
      ...recoveryLines(result.recoveries, result.unmeasuredRecoveries, result.recoveriesInOutages),
      ...verdict.lines,
    ],
  };
}

function endingVerdict(result: ChaosResult): Ending {
  const head = `chaos: events=${result.events} kills=${result.kills}`;
  const where =
    `chaos: delivered=${result.delivered} pending_outbox=${result.pendingOutbox} pending_topic=${result.pendingTopic}` +
    ` unwritten=${result.unwritten} lost=${result.lost}`;
  if (result.lost > 0) {
    // Where the lost went, when the library gave up on them (a dead letter, a refused row): the lead to their cause.
    const givenUp = (result.givenUp ?? []).map(
      (row) => `chaos: lost order=${row.key} ${row.how}: ${row.reason.replace(/\s+/g, ' ').slice(0, 300)}`,
    );
    const why = `chaos: lost=${result.lost} dead_lettered=${result.deadLettered ?? 0} refused=${result.refused ?? 0}`;
    return {
      lines: [
        ...(result.pending > 0 ? [where] : []),
        why,
        ...givenUp,
        `${head} lost=${result.lost} duplicated=${result.duplicated}`,
      ],
      exitCode: 1,
    };
  }
  if (result.pending > 0) {
    return {
      lines: [
        where,
        `${head} incomplete delivered=${result.delivered} pending=${result.pending} duplicated=${result.duplicated}`,
      ],
      exitCode: result.duplicated > 0 ? 1 : 2,
    };
  }
  return { lines: [`${head} lost=0 duplicated=${result.duplicated}`], exitCode: result.duplicated > 0 ? 1 : 0 };
}

/** The default deadline, scaled to the run: a base, plus time per event, per kill and per restart. */
export function defaultTimeoutMs(options: {
  events: number;
  kills: number;
  restartBroker?: number;
  restartPostgres?: number;
}): number {
  const restarts = (options.restartBroker ?? 0) + (options.restartPostgres ?? 0);
  return 120_000 + options.events * 4 + options.kills * 6_000 + restarts * 30_000;
}
