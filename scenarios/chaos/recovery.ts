// What a kill costs: per role, the seconds from each kill to the first event its successor applied (consumer) or
// published (relay), as percentiles, with the median of each phase (respawn, code load, start, first apply).
import type { Recovery, Role } from './children.ts';

/** Nearest-rank percentile of `values` (0 < p <= 1). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

export interface RoleRecovery {
  role: Role;
  measured: number;
  p50: number;
  p99: number;
  max: number;
  /** Median seconds of each phase. */
  phases: Recovery['phases'];
}

export function recoveryByRole(recoveries: Recovery[]): RoleRecovery[] {
  const roles = [...new Set(recoveries.map((recovery) => recovery.role))].sort();
  return roles.map((role) => {
    const mine = recoveries.filter((recovery) => recovery.role === role);
    const seconds = mine.map((recovery) => recovery.seconds);
    const median = (phase: keyof Recovery['phases']) =>
      percentile(
        mine.map((recovery) => recovery.phases[phase]),
        0.5,
      );
    return {
      role,
      measured: mine.length,
      p50: percentile(seconds, 0.5),
      p99: percentile(seconds, 0.99),
      max: Math.max(...seconds),
      phases: {
        respawn: median('respawn'),
        load: median('load'),
        start: median('start'),
        firstApply: median('firstApply'),
      },
    };
  });
}

/** `chaos: recovery role=consumer measured=3 recovery_p50_s=1.42 recovery_p99_s=2.10 ...`, one line per role. */
export function recoveryLines(recoveries: Recovery[], unmeasured: number, inOutages: Recovery[] = []): string[] {
  const f = (seconds: number) => seconds.toFixed(2);
  const lines = recoveryByRole(recoveries).map(
    (r) =>
      `chaos: recovery role=${r.role} measured=${r.measured} recovery_p50_s=${f(r.p50)} recovery_p99_s=${f(r.p99)}` +
      ` max_s=${f(r.max)} phases_p50_s=respawn:${f(r.phases.respawn)},load:${f(r.phases.load)},` +
      `start:${f(r.phases.start)},first_apply:${f(r.phases.firstApply)}`,
  );
  if (inOutages.length > 0) {
    const longest = Math.max(...inOutages.map((recovery) => recovery.seconds));
    lines.push(
      `chaos: recovery during_outages=${inOutages.length} max_s=${f(longest)} (next to a broker or PostgreSQL outage: not counted above)`,
    );
  }
  if (unmeasured > 0) lines.push(`chaos: recovery unmeasured=${unmeasured} (successor killed or run ended first)`);
  return lines;
}
