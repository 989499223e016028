// Turns recorded timelines into what the charts draw: one row per metric, one cell per variant, with a y range shared
// by the row's cells (naive and effectively compare at a glance) and a time range shared by the whole report.
import { bucketMs, type TimelineData } from './timeline.ts';

export interface Point {
  /** Seconds since the variant's start. */
  t: number;
  v: number;
}

export interface LineCell {
  kind: 'line';
  points: Point[];
  /** A short summary under the chart, e.g. "peak 42/s · total 1,234". */
  summary: string;
}

export interface StateCell {
  kind: 'state';
  segments: { from: number; to: number; state: string }[];
  summary: string;
}

export type Cell = LineCell | StateCell;

export interface Row {
  name: string;
  title: string;
  unit: string;
  kind: 'line' | 'state';
  /** Cells in the order of the report's variants; undefined where that variant did not record this metric. */
  cells: (Cell | undefined)[];
  yMax: number;
  limit: number | undefined;
}

type Show = 'rate' | 'total' | 'value' | 'state';
interface Spec {
  title: string;
  unit: string;
  show: Show;
}

/** The metrics the report knows, in the order it shows them. */
const known: Record<string, Spec> = {
  applied: { title: 'Throughput', unit: 'events applied per second', show: 'rate' },
  lag: { title: 'Consumer lag', unit: 'records behind', show: 'value' },
  retries: { title: 'Retries', unit: 'per second', show: 'rate' },
  'dead letters': { title: 'Dead letters', unit: 'running total', show: 'total' },
  breaker: { title: 'Circuit breaker', unit: 'state over time', show: 'state' },
  'provider calls': { title: 'Provider calls against the rate limit', unit: 'calls per second', show: 'rate' },
};

export function buildRows(timelines: TimelineData[]): { rows: Row[]; durationS: number; stepS: number } {
  const durationS = Math.max(1, ...timelines.map((data) => data.endedMs / 1000));
  const stepS = renderStepS(durationS);
  return { rows: metricNames(timelines).map((name) => buildRow(name, timelines, stepS)), durationS, stepS };
}

/** Render buckets: 1 s, or coarser so a long run keeps about 300 points per chart. */
export function renderStepS(durationS: number): number {
  return Math.max(1, Math.ceil(durationS / 300));
}

function metricNames(timelines: TimelineData[]): string[] {
  const names = new Set<string>();
  for (const data of timelines) {
    for (const name of data.counters.keys()) names.add(name);
    for (const name of data.gauges.keys()) names.add(name);
  }
  const order = Object.keys(known);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A known metric's spec, else one from what was recorded under the name. */
function specOf(name: string, timelines: TimelineData[]): Spec {
  const spec = known[name];
  if (spec) return spec;
  if (timelines.some((data) => data.counters.has(name))) return { title: name, unit: 'per second', show: 'rate' };
  const stringy = timelines.some((data) => data.gauges.get(name)?.some((s) => typeof s.value === 'string'));
  return stringy ? { title: name, unit: 'state over time', show: 'state' } : { title: name, unit: '', show: 'value' };
}

function buildRow(name: string, timelines: TimelineData[], stepS: number): Row {
  const spec = specOf(name, timelines);
  const cells = timelines.map((data) => buildCell(name, spec.show, data, stepS));
  const limits = timelines.map((data) => data.limits.get(name)).filter((l) => l !== undefined);
  const limit = limits.length > 0 ? Math.max(...limits) : undefined;
  let yMax = limit ?? 0;
  for (const cell of cells) {
    if (cell?.kind === 'line') for (const p of cell.points) yMax = Math.max(yMax, p.v);
  }
  return {
    name,
    title: spec.title,
    unit: spec.unit,
    kind: spec.show === 'state' ? 'state' : 'line',
    cells,
    yMax,
    limit,
  };
}

/** A variant's cell, from what it recorded: a counter as a rate (or running total), a gauge as a line or a band. */
function buildCell(name: string, show: Show, data: TimelineData, stepS: number): Cell | undefined {
  const endS = data.endedMs / 1000;
  const buckets = data.counters.get(name);
  if (buckets) return counterCell(buckets, show === 'total', stepS, endS);
  const samples = data.gauges.get(name);
  if (!samples) return undefined;
  if (show === 'state' || samples.some((s) => typeof s.value === 'string')) return stateCell(samples, endS);
  return valueCell(samples as { t: number; value: number }[], stepS);
}

function counterCell(buckets: Map<number, number>, running: boolean, stepS: number, endS: number): LineCell {
  const sums = perStep(buckets, stepS, endS);
  const total = sums.reduce((a, b) => a + b, 0);
  if (running) {
    let sum = 0;
    const points = [{ t: 0, v: 0 }];
    sums.forEach((n, i) => {
      sum += n;
      points.push({ t: Math.min(endS, (i + 1) * stepS), v: sum });
    });
    return { kind: 'line', points, summary: `total ${formatNumber(total)}` };
  }
  const points = sums.map((sum, i) => {
    const from = i * stepS;
    // The last step runs to the end of the run: a little over or under a step.
    const width = i === sums.length - 1 && endS > from ? endS - from : stepS;
    return { t: from + width / 2, v: sum / width };
  });
  const peak = Math.max(0, ...points.map((p) => p.v));
  return { kind: 'line', points, summary: `peak ${formatNumber(peak)}/s · total ${formatNumber(total)}` };
}

/** Counts summed per render step; a last step shorter than half a step is folded into the one before. */
function perStep(buckets: Map<number, number>, stepS: number, endS: number): number[] {
  const steps = Math.max(1, Math.round(endS / stepS));
  const sums = new Array<number>(steps).fill(0);
  for (const [bucket, count] of buckets) {
    const i = Math.min(steps - 1, Math.floor((bucket * bucketMs) / 1000 / stepS));
    sums[i]! += count;
  }
  return sums;
}

function valueCell(samples: { t: number; value: number }[], stepS: number): LineCell {
  // Many samples per step: keep each step's highest, so a peak is never averaged away.
  const byStep = new Map<number, Point>();
  for (const { t, value } of samples) {
    const key = samples.length > 600 ? Math.floor(t / 1000 / stepS) : t;
    const seen = byStep.get(key);
    if (!seen || value > seen.v) byStep.set(key, { t: t / 1000, v: value });
  }
  const points = [...byStep.values()];
  const peak = Math.max(0, ...points.map((p) => p.v));
  const end = points.at(-1)?.v ?? 0;
  return { kind: 'line', points, summary: `peak ${formatNumber(peak)} · at the end ${formatNumber(end)}` };
}

function stateCell(samples: { t: number; value: number | string }[], endS: number): StateCell {
  const segments = samples.map((s, i) => ({
    from: s.t / 1000,
    to: i + 1 < samples.length ? samples[i + 1]!.t / 1000 : endS,
    state: String(s.value),
  }));
  const open = segments.filter((s) => s.state === 'open');
  const openS = open.reduce((sum, s) => sum + (s.to - s.from), 0);
  const summary =
    open.length > 0
      ? `open ${open.length} time${open.length === 1 ? '' : 's'}, ${openS.toFixed(1)} s in all`
      : segments.every((s) => s.state === 'closed')
        ? 'closed throughout'
        : `${segments.length} state${segments.length === 1 ? '' : 's'} in turn`;
  return { kind: 'state', segments, summary };
}

export function formatNumber(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${+(v / 1e6).toFixed(abs >= 1e7 ? 0 : 1)}M`;
  if (abs >= 1e4) return `${+(v / 1e3).toFixed(abs >= 1e5 ? 0 : 1)}k`;
  if (abs >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
  return String(+v.toFixed(abs >= 10 ? 1 : 2));
}
