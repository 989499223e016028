import { printable } from '../printable.ts';

/** ok: as it should be; warn/fail: not healthy (exit 1); skip: not checked here, and why (no effect on the exit). */
export type Level = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of the doctor's report. */
export interface Finding {
  level: Level;
  /** The check's stable name (`postgres`, `migrations`, `retention`...), what a machine matches on. */
  check: string;
  /** What was found, and against what (`orders: retention.ms 30d > dedup retention 1d of group billing`). */
  what: string;
  /** What to do about it (absent when nothing is to be done). */
  fix?: string;
}

export function finding(level: Level, check: string, what: string, fix?: string): Finding {
  return fix === undefined ? { level, check, what } : { level, check, what, fix };
}

/** Healthy when no finding is a warning or a failure. */
export function healthy(findings: readonly Finding[]): boolean {
  return findings.every((f) => f.level === 'ok' || f.level === 'skip');
}

/** `fail  retention   orders: ... — fix: ...`, one line, control characters shown (names come from outside). */
export function findingLine(f: Finding): string {
  return printable(`${f.level.padEnd(4)}  ${f.check.padEnd(14)}  ${f.what}${f.fix ? ` — ${f.fix}` : ''}`);
}

/** `86400000` → `1d`, `5400000` → `90m`: the largest unit that divides it, for the lines. */
export function showMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
