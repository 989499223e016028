// Writes a scenario run's report: one self-contained HTML file (inline CSS and SVG, no script, no network).
//
//   import { createTimeline } from '../report/timeline.ts';
//   import { writeReport } from '../report/write.ts';
//
//   const effectively = createTimeline();   // pass it into the run; count/gauge/mark as things happen
//   const naive = createTimeline();         // the naive twin's run, if there is one
//   ...
//   await effectively.stop(); await naive.stop();
//   const path = await writeReport({
//     scenario: 'retry-storm',
//     auditLine: 'retry-storm: orders=1000 emails=1000 ... duplicates=0 lost=0',
//     startedAt: new Date(started),
//     variants: [
//       { name: 'naive', timeline: naive, auditLine: 'naive: ... duplicates=12 lost=3' },
//       { name: 'effectively', timeline: effectively },
//     ],
//     facts: { orders: 1000, 'provider limit': '20/s' },
//   });
//   console.log(`report: ${path}`);   // reports/retry-storm-2026-12-04T04-10-22Z.html
//
// Each variant may carry its own auditLine, description and facts. `dir` defaults to 'reports' (git-ignored).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Facts, renderPage } from './html.ts';
import type { Timeline } from './timeline.ts';

export interface ReportVariant {
  name: 'effectively' | 'naive';
  timeline: Timeline;
  auditLine?: string;
  description?: string;
  facts?: Facts;
}

export interface ReportOptions {
  scenario: string;
  auditLine: string;
  /** When the run started (default: the first variant's timeline's start). */
  startedAt?: Date | number;
  variants: ReportVariant[];
  facts?: Facts;
  dir?: string;
}

/** Writes reports/<scenario>-<time>.html and returns its path. */
export async function writeReport(options: ReportOptions): Promise<string> {
  const variants = options.variants.map((variant) => ({ ...variant, data: variant.timeline.data() }));
  const startedAt = new Date(options.startedAt ?? variants[0]?.data.startedAt ?? Date.now());
  const html = renderPage({
    scenario: options.scenario,
    auditLine: options.auditLine,
    startedAt,
    variants,
    facts: options.facts,
  });
  const dir = options.dir ?? 'reports';
  await mkdir(dir, { recursive: true });
  const path = join(
    dir,
    `${fileSafe(options.scenario)}-${startedAt
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}.html`,
  );
  await writeFile(path, html);
  return path;
}

function fileSafe(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'scenario'
  );
}
