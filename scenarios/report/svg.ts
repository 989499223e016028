// Hand-written SVG charts for the report: a line chart (with a light area under it, an optional dashed limit line)
// and a state band (the breaker's closed / half-open / open over time). Both share the x axis (seconds) and the
// vertical markers. Every string that came from a run goes through escapeHtml.
import { escapeHtml } from './escape.ts';
import { formatNumber, type LineCell, type Point, type StateCell } from './series.ts';

export interface Frame {
  /** The report's time range, seconds. */
  durationS: number;
  marks: { t: number; label: string }[];
  /** Whether the marks' labels are written (on the first row only: below, the dashed lines speak for themselves). */
  labelMarks: boolean;
  color: string;
  /** The chart's width in SVG units: 560 beside another variant, wider when alone. */
  width: number;
  /** What the chart shows, for screen readers and as a tooltip. */
  title: string;
}

const pad = { left: 50, right: 14, top: 10, bottom: 26 };
const plotHeight = 122;
const bandHeight = 30;
const labelRow = 13;

export const stateColors: Record<string, string> = { closed: '#3fa66b', 'half-open': '#e0a526', open: '#d6453d' };
const otherStateColors = ['#6b8fd6', '#9a6bd6', '#4fb3b3', '#c06b9a'];

export function lineChart(cell: LineCell | undefined, yMax: number, limit: number | undefined, frame: Frame): string {
  const innerH = plotHeight;
  const labels = markLabels(frame);
  const top = pad.top + labels.height;
  const ticks = niceTicks(yMax);
  const yTop = ticks.at(-1)!;
  const x = xScale(frame);
  const right = frame.width - pad.right;
  const y = (v: number) => top + innerH - (v / yTop) * innerH;
  const parts: string[] = [];
  for (const tick of ticks) {
    const ty = r(y(tick));
    parts.push(`<line class="grid" x1="${pad.left}" x2="${right}" y1="${ty}" y2="${ty}"/>`);
    parts.push(
      `<text class="tick" x="${pad.left - 6}" y="${r(y(tick) + 4)}" text-anchor="end">${formatNumber(tick)}</text>`,
    );
  }
  parts.push(xAxis(frame, top + innerH));
  if (cell && cell.points.length > 0) parts.push(path(cell.points, x, y, top + innerH, frame.color));
  else parts.push(noData(frame, top + innerH / 2));
  if (limit !== undefined) {
    const ly = r(y(limit));
    parts.push(`<line class="limit" x1="${pad.left}" x2="${right}" y1="${ly}" y2="${ly}"/>`);
    parts.push(
      `<text class="limit-label" x="${right - 4}" y="${r(y(limit) - 5)}" text-anchor="end">limit ${formatNumber(limit)}/s</text>`,
    );
  }
  parts.push(markers(frame, labels, top, top + innerH));
  return svg(frame, top + innerH + pad.bottom, parts);
}

export function stateChart(cell: StateCell | undefined, frame: Frame): string {
  const labels = markLabels(frame);
  const bandTop = pad.top + labels.height + 4;
  const bandH = bandHeight;
  const x = xScale(frame);
  const parts: string[] = [];
  parts.push(`<rect class="band-bg" x="${pad.left}" y="${bandTop}" width="${innerWidth(frame)}" height="${bandH}"/>`);
  if (cell && cell.segments.length > 0) {
    for (const segment of cell.segments) {
      const x0 = x(segment.from);
      const w = Math.max(1, x(segment.to) - x0);
      const fill = stateColor(segment.state);
      parts.push(
        `<rect x="${r(x0)}" y="${bandTop}" width="${r(w)}" height="${bandH}" fill="${fill}"><title>${escapeHtml(segment.state)} ${segment.from.toFixed(1)}–${segment.to.toFixed(1)} s</title></rect>`,
      );
      if (w > segment.state.length * 7 + 8) {
        parts.push(
          `<text class="band-label" x="${r(x0 + w / 2)}" y="${bandTop + bandH / 2 + 4}" text-anchor="middle">${escapeHtml(segment.state)}</text>`,
        );
      }
    }
  } else {
    parts.push(noData(frame, bandTop + bandH / 2));
  }
  const axisY = bandTop + bandH + 8;
  parts.push(xAxis(frame, axisY));
  parts.push(markers(frame, labels, bandTop - 4, axisY));
  return svg(frame, axisY + pad.bottom, parts);
}

export function stateColor(state: string): string {
  const known = stateColors[state];
  if (known) return known;
  let hash = 0;
  for (const ch of state) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return otherStateColors[hash % otherStateColors.length]!;
}

function svg(frame: Frame, height: number, parts: string[]): string {
  const title = escapeHtml(frame.title);
  return `<svg class="chart" viewBox="0 0 ${frame.width} ${height}" width="${frame.width}" height="${height}" role="img" aria-label="${title}" xmlns="http://www.w3.org/2000/svg"><title>${title}</title>${parts.join('')}</svg>`;
}

function innerWidth(frame: Frame): number {
  return frame.width - pad.left - pad.right;
}

function xScale(frame: Frame): (t: number) => number {
  const innerW = innerWidth(frame);
  return (t: number) => pad.left + (Math.min(t, frame.durationS) / frame.durationS) * innerW;
}

function path(points: Point[], x: (t: number) => number, y: (v: number) => number, baseY: number, color: string) {
  const line = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${r(x(p.t))},${r(y(p.v))}`).join('');
  const area = `${line}L${r(x(points.at(-1)!.t))},${baseY}L${r(x(points[0]!.t))},${baseY}Z`;
  return (
    `<path d="${area}" fill="${color}" fill-opacity="0.13" stroke="none"/>` +
    `<path d="${line}" fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`
  );
}

function xAxis(frame: Frame, axisY: number): string {
  const x = xScale(frame);
  const step = niceTimeStep(frame.durationS, Math.floor(innerWidth(frame) / 62));
  const parts = [`<line class="axis" x1="${pad.left}" x2="${frame.width - pad.right}" y1="${axisY}" y2="${axisY}"/>`];
  for (let t = 0; t <= frame.durationS + 1e-9; t += step) {
    parts.push(`<line class="axis" x1="${r(x(t))}" x2="${r(x(t))}" y1="${axisY}" y2="${axisY + 4}"/>`);
    parts.push(
      `<text class="tick" x="${r(x(t))}" y="${axisY + 16}" text-anchor="middle">${formatTime(t, frame.durationS)}</text>`,
    );
  }
  return parts.join('');
}

interface MarkLabels {
  /** Each mark's x and the label row it is written on. */
  placed: { x: number; row: number; label: string; anchor: 'start' | 'end' }[];
  /** Room the label rows take above the plot. */
  height: number;
}

/** Places the marks' labels: each on the first row where it does not run into the label before it. */
function markLabels(frame: Frame): MarkLabels {
  const x = xScale(frame);
  const rowEnds: number[] = [];
  const placed = frame.marks.map(({ t, label }) => {
    const mx = x(t / 1000);
    const textW = label.length * 6.2 + 6;
    const anchor: 'start' | 'end' = mx + textW > frame.width ? 'end' : 'start';
    const [from, to] = anchor === 'start' ? [mx, mx + textW] : [mx - textW, mx];
    let row = rowEnds.findIndex((end) => end < from);
    if (row < 0) row = rowEnds.length;
    rowEnds[row] = to;
    return { x: mx, row, label, anchor };
  });
  const rows = frame.labelMarks ? rowEnds.length : 0;
  return { placed, height: rows * labelRow };
}

/** Vertical dashed lines at the run's marks, with their labels above the plot when the frame writes them. */
function markers(frame: Frame, labels: MarkLabels, top: number, bottom: number): string {
  const parts: string[] = [];
  for (const { x, row, label, anchor } of labels.placed) {
    const lineTop = frame.labelMarks ? pad.top + row * labelRow - 2 : top;
    parts.push(`<line class="mark" x1="${r(x)}" x2="${r(x)}" y1="${lineTop}" y2="${bottom}"/>`);
    if (!frame.labelMarks) continue;
    const dx = anchor === 'end' ? -3 : 3;
    parts.push(
      `<text class="mark-label" x="${r(x + dx)}" y="${pad.top + row * labelRow + 7}" text-anchor="${anchor}">${escapeHtml(label)}</text>`,
    );
  }
  return parts.join('');
}

function noData(frame: Frame, midY: number): string {
  return `<text class="nodata" x="${pad.left + innerWidth(frame) / 2}" y="${midY + 4}" text-anchor="middle">not recorded in this run</text>`;
}

/** Ticks 0..top with a 1/2/5 step, about four of them; top ≥ max (and 1 when max is 0). */
export function niceTicks(max: number): number[] {
  const raw = Math.max(max, 1e-9) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const niceStep = max <= 0 ? 0.25 : step < 1 && max >= 1 ? 1 : step;
  const ticks: number[] = [];
  for (let v = 0; ticks.length === 0 || ticks.at(-1)! < max - 1e-9; v += niceStep) ticks.push(+v.toFixed(10));
  if (ticks.length === 1) ticks.push(max <= 0 ? 1 : niceStep);
  return ticks;
}

function niceTimeStep(durationS: number, maxTicks: number): number {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
  return steps.find((s) => durationS / s <= maxTicks) ?? 7200;
}

/** Seconds on a run under two minutes, m:ss on a longer one. */
function formatTime(t: number, durationS: number): string {
  if (durationS < 120) return `${Math.round(t)} s`;
  const m = Math.floor(t / 60);
  const s = Math.round(t % 60);
  return `${m}:${String(s).padStart(2, '0')}`;
}

function r(v: number): string {
  return String(Math.round(v * 10) / 10);
}
