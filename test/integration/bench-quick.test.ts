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
  'eos_commit_interval_ms',
  'eos_window_vs_alo',
  'eos_reader_p99_ms',
  'eos_window_reader_p99_ms',
  'alo_reader_p99_ms',
  'wal_eps',
  'wal_vs_poll',
  'wal_p99_ms',
  'wal_hops_p99_ms',
  'wal_structured_eps',
  'e2e_hops_p99_ms',
  'transport_raw_headers_eps',
  'headers_vs_plain',
  'pjs_raw_headers_eps',
  'pjs_headers_vs_plain',
  'pjs_vs_transport_headers',
];

test('bench --quick: every phase runs and the last line has every field as a number', async (t) => {
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
    // e2e_hops_p99_ms and wal_hops_p99_ms are the hops' p99, `a/b/c` and `a/b`; every other field one number, positive
    // but for the pipeline's default commitIntervalMs (a setting, 0 when off).
    const least = name === 'eos_commit_interval_ms' ? 0 : Number.MIN_VALUE;
    for (const part of (summary[name] ?? '').split('/')) {
      const value = Number(part);
      assert.ok(part !== '' && Number.isFinite(value) && value >= least, `${name}=${summary[name]}`);
    }
  }
  assert.equal(summary.e2e_hops_p99_ms?.split('/').length, 3, `e2e_hops_p99_ms=${summary.e2e_hops_p99_ms}`);
  assert.equal(summary.wal_hops_p99_ms?.split('/').length, 2, `wal_hops_p99_ms=${summary.wal_hops_p99_ms}`);
});
