// The report page: a header with the audit line and key figures, then one row per metric with the variants side by
// side (naive left, effectively right), each chart its own inline SVG. One file: inline CSS, no script, no network
// (a Content-Security-Policy forbids both, should anything slip through).
import { escapeHtml } from './escape.ts';
import { buildRows, type Row } from './series.ts';
import { lineChart, stateChart, stateColor } from './svg.ts';
import type { TimelineData } from './timeline.ts';

export type Facts = Record<string, string | number>;

export interface PageVariant {
  name: string;
  data: TimelineData;
  auditLine?: string | undefined;
  description?: string | undefined;
  facts?: Facts | undefined;
}

export interface PageInput {
  scenario: string;
  auditLine: string;
  startedAt: Date;
  variants: PageVariant[];
  facts?: Facts | undefined;
}

const colors: Record<string, string> = { effectively: '#2563eb', naive: '#e8590c' };
const descriptions: Record<string, string> = {
  naive: 'the same services without outbox, dedup or idempotency keys',
  effectively: 'outbox, idempotent consumers, effects sender with rate limit and breaker',
};

export function renderPage(input: PageInput): string {
  const order = (name: string) => (name === 'naive' ? 0 : name === 'effectively' ? 1 : 2);
  const variants = [...input.variants].sort((a, b) => order(a.name) - order(b.name));
  const { rows, durationS, stepS } = buildRows(variants.map((v) => v.data));
  const title = `${input.scenario} · effectively report`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<main>
${header(input, durationS)}
${facts(input.facts)}
<section class="grid" style="grid-template-columns: repeat(${variants.length}, minmax(0, 1fr))">
${variants.map(columnHead).join('\n')}
${rows.map((row, i) => renderRow(row, variants, durationS, i === 0)).join('\n')}
</section>
${legend(rows, stepS)}
</main>
</body>
</html>
`;
}

function header(input: PageInput, durationS: number): string {
  const started = input.startedAt
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return `<header>
<div class="kicker">effectively · scenario report</div>
<h1>${escapeHtml(input.scenario)}</h1>
<div class="meta">started ${escapeHtml(started)} · ran ${durationS.toFixed(1)} s</div>
<div class="audit">${auditHtml(input.auditLine)}</div>
</header>`;
}

/** An audit line, escaped, with its counts of what must not happen (duplicates, lost, ...) green at 0, red above. */
function auditHtml(line: string): string {
  return escapeHtml(line).replace(
    /\b(duplicates|duplicated|lost|missing|oversold)=(\d+)/g,
    (_, key: string, n: string) => {
      const bad = Number(n) > 0;
      return `<b class="${bad ? 'bad' : 'good'}">${key}=${n}</b>`;
    },
  );
}

function facts(all: Facts | undefined, className = 'facts'): string {
  if (!all || Object.keys(all).length === 0) return '';
  const cards = Object.entries(all).map(
    ([key, value]) =>
      `<div class="fact"><div class="value">${escapeHtml(typeof value === 'number' ? value.toLocaleString('en-US') : value)}</div><div class="key">${escapeHtml(key)}</div></div>`,
  );
  return `<section class="${className}">${cards.join('')}</section>`;
}

function columnHead(variant: PageVariant): string {
  const color = colors[variant.name] ?? '#555';
  const description = variant.description ?? descriptions[variant.name];
  return `<div class="colhead" style="border-color:${color}">
<div class="variant" style="color:${color}">${escapeHtml(variant.name)}</div>
${description ? `<div class="desc">${escapeHtml(description)}</div>` : ''}
${variant.auditLine ? `<div class="audit small">${auditHtml(variant.auditLine)}</div>` : ''}
${facts(variant.facts, 'facts small')}
</div>`;
}

function renderRow(row: Row, variants: PageVariant[], durationS: number, labelMarks: boolean): string {
  const cells = row.cells.map((cell, i) => {
    const variant = variants[i]!;
    const frame = {
      durationS,
      marks: variant.data.marks,
      labelMarks,
      color: colors[variant.name] ?? '#555',
      width: variants.length === 1 ? 1140 : 560,
      title: `${row.title}, ${variant.name}`,
    };
    const chart =
      row.kind === 'state'
        ? stateChart(cell?.kind === 'state' ? cell : undefined, frame)
        : lineChart(cell?.kind === 'line' ? cell : undefined, row.yMax, row.limit, frame);
    const summary = cell ? `<figcaption>${escapeHtml(cell.summary)}</figcaption>` : '';
    return `<figure class="cell">${chart}${summary}</figure>`;
  });
  return `<h2 class="row-title" style="grid-column: 1 / -1">${escapeHtml(row.title)} <span>${escapeHtml(row.unit)}</span>${stateSwatches(row)}</h2>
${cells.join('\n')}`;
}

function stateSwatches(row: Row): string {
  if (row.kind !== 'state') return '';
  const states = new Set<string>(['closed', 'half-open', 'open']);
  for (const cell of row.cells) if (cell?.kind === 'state') for (const s of cell.segments) states.add(s.state);
  const items = [...states].map(
    (s) => `<span class="swatch"><i style="background:${stateColor(s)}"></i>${escapeHtml(s)}</span>`,
  );
  return `<span class="swatches">${items.join('')}</span>`;
}

function legend(rows: Row[], stepS: number): string {
  const items = ['<span><i class="mark-key"></i>an event of the run (crash, restart, fault on or off)</span>'];
  if (rows.some((row) => row.limit !== undefined)) items.push('<span><i class="limit-key"></i>the rate limit</span>');
  items.push(
    `<span>rates are per second over ${stepS} s steps; a gauge such as lag shows its highest sample; each row shares its scale across variants</span>`,
  );
  return `<footer>${items.join('')}</footer>`;
}

const css = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1f2430;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 28px 32px 36px; }
header { margin-bottom: 18px; }
.kicker { text-transform: uppercase; letter-spacing: .08em; font-size: 11px; color: #6b7280; font-weight: 600; }
h1 { margin: 2px 0 4px; font-size: 28px; letter-spacing: -.01em; }
.meta { color: #6b7280; font-size: 13px; }
.audit { margin-top: 12px; padding: 10px 14px; background: #101827; color: #d1fae5; border-radius: 8px;
  font: 13px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  white-space: pre-wrap; word-break: break-word; }
.audit b { font-weight: 700; }
.audit .good { color: #6ee7a8; }
.audit .bad { color: #fff; background: #c2410c; border-radius: 3px; padding: 0 3px; }
.audit.small { margin-top: 8px; padding: 6px 10px; font-size: 12px; }
.facts { display: flex; flex-wrap: wrap; gap: 10px; margin: 0 0 22px; }
.fact { background: #fff; border: 1px solid #e3e6eb; border-radius: 8px; padding: 8px 14px; min-width: 110px; }
.fact .value { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.fact .key { font-size: 12px; color: #6b7280; }
.facts.small { margin: 8px 0 0; gap: 6px; }
.facts.small .fact { padding: 4px 10px; min-width: 0; }
.facts.small .value { font-size: 15px; }
.grid { display: grid; column-gap: 18px; row-gap: 4px; }
.colhead { background: #fff; border: 1px solid #e3e6eb; border-top: 4px solid; border-radius: 8px; padding: 10px 14px; }
.variant { font-weight: 700; font-size: 17px; }
.desc { color: #4b5563; font-size: 13px; }
.row-title { margin: 18px 0 4px; font-size: 15px; font-weight: 650; display: flex; align-items: baseline; gap: 10px;
  flex-wrap: wrap; }
.row-title > span { font-weight: 400; color: #6b7280; font-size: 13px; }
.swatches { display: inline-flex; gap: 12px; margin-left: auto; }
.swatch { display: inline-flex; align-items: center; gap: 5px; color: #4b5563; font-size: 12px; font-weight: 400; }
.swatch i, footer i { display: inline-block; width: 14px; height: 10px; border-radius: 2px; }
figure.cell { margin: 0; background: #fff; border: 1px solid #e3e6eb; border-radius: 8px; padding: 6px 8px 6px; }
figure.cell svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 12px; color: #4b5563; padding: 0 4px 2px; font-variant-numeric: tabular-nums; }
svg .grid { stroke: #eceef2; stroke-width: 1; }
svg .axis { stroke: #9aa1ad; stroke-width: 1; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg .tick { fill: #6b7280; font-size: 11px; }
svg .limit { stroke: #b91c1c; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .limit-label { fill: #b91c1c; font-size: 11px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 3; }
svg .mark { stroke: #4b5563; stroke-width: 1; stroke-dasharray: 3 3; opacity: .75; }
svg .mark-label { fill: #374151; font-size: 10.5px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 3; }
svg .band-bg { fill: #f1f2f5; }
svg .band-label { fill: #fff; font-size: 11px; font-weight: 600; }
svg .nodata { fill: #9aa1ad; font-size: 12px; font-style: italic; }
footer { margin-top: 22px; display: flex; flex-wrap: wrap; gap: 18px; color: #6b7280; font-size: 12px; }
footer span { display: inline-flex; align-items: center; gap: 6px; }
footer .mark-key { width: 0; height: 14px; border-left: 1.5px dashed #4b5563; border-radius: 0; }
footer .limit-key { width: 22px; height: 0; border-top: 2px dashed #b91c1c; border-radius: 0; }
`;
