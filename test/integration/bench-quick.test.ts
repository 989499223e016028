// `npm run bench -- --quick` end to end: every phase runs against the real broker and PostgreSQL and the last line
// carries every summary field as a number. No speed is asserted here (targets live in the bench's own full run); this
// only keeps the bench from breaking unseen (a change to the dedup claim once made its dedup phase throw).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { needs } from '../support/services.ts';

const fields = [
  'batch_vs_raw',
  'batch_vs_per_record',
  'relay_eps',
  'e2e_p99_ms',
  'rss_peak_mb',
  'rss_peak_default_mb',
  'memory_bounded_eps_vs_default',
  'client_raw_eps',
  'transport_vs_client',
  'batch_vs_client',
  'dedup_10m_vs_1m',
  'parallel_keys50_speedup',
  'eos_vs_alo',
  'wal_eps',
  'wal_vs_poll',
  'wal_p99_ms',
  'e2e_hops_p99_ms',
  'transport_raw_headers_eps',
  'headers_vs_plain',
];

test('bench --quick: every phase runs and the last line has every field as a positive number', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const main = fileURLToPath(new URL('../../bench/main.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', main, '--quick'], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 600_000,
  });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  assert.match(last, /^bench: /, stdout);
  const summary = Object.fromEntries(
    last
      .slice('bench: '.length)
      .split(' ')
      .map((pair) => pair.split('=') as [string, string]),
  );
  assert.deepEqual(Object.keys(summary), fields);
  for (const name of fields) {
    // e2e_hops_p99_ms is the three hops' p99, `a/b/c`; every other field one number.
    for (const part of (summary[name] ?? '').split('/')) {
      const value = Number(part);
      assert.ok(part !== '' && Number.isFinite(value) && value > 0, `${name}=${summary[name]}`);
    }
  }
  assert.equal(summary.e2e_hops_p99_ms?.split('/').length, 3, `e2e_hops_p99_ms=${summary.e2e_hops_p99_ms}`);
});
