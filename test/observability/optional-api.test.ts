// `@opentelemetry/api` is an optional peer: the library loads and works without it, and loads it only on first use.
// Children with the package hidden (as never installed) and present; the naive twin, a static import of the API,
// fails under the same hiding, so the hiding is real.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const run = promisify(execFile);
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
const hide = ['--import', fixture('hide-otel-api.mjs')];

async function child(hidden: boolean) {
  const args = [...(hidden ? hide : []), '--import', 'tsx', fixture('without-api.mts'), randomName('otel_opt')];
  const { stdout } = await run(process.execPath, args, { env: process.env });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    afterImport: boolean;
    afterUse: boolean;
    headers: string[];
  };
}

test('without @opentelemetry/api: the outbox and the effects work, and no trace header is written', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const result = await child(true);
  assert.deepEqual([result.afterImport, result.afterUse], [false, false]);
  assert.ok(result.headers.includes('ce_id') && !result.headers.includes('traceparent'), result.headers.join());
});

test('with it installed: not loaded by the import, only by the first instrumented call', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const result = await child(false);
  assert.deepEqual([result.afterImport, result.afterUse], [false, true]);
  assert.ok(!result.headers.includes('traceparent'), 'no SDK, no trace: nothing to carry');
});

test('naive twin: a static import of the API fails where it is not installed', async () => {
  const script = "import('@opentelemetry/api').then(() => console.log('loaded'))";
  await assert.rejects(run(process.execPath, [...hide, '-e', script]), /Cannot find module '@opentelemetry\/api'/);
});
