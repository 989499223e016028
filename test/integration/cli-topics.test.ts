// `effectively topics create`: like migrate for the broker — creates missing topics, leaves existing ones, refuses
// names Kafka refuses. Real broker.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { cli } from '../support/cli.ts';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [cli, 'topics', ...args]).then(
    ({ stdout }) => ({ code: 0, out: stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      out: error.stdout + error.stderr,
    }),
  );

test('topics create: missing topics are created with the partitions asked, existing ones left; bad names refused', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const [first, second] = [randomName('tc').replace('_', '-'), randomName('tc').replace('_', '-')];
  const admin = kafkaTransport({ clientId: 'effectively-test' }).admin();
  t.after(async () => {
    await admin.deleteTopics([first, second]).catch(() => undefined);
    await admin.close();
  });
  const created = await run('create', first, '--partitions', '3');
  assert.equal(created.code, 0, created.out);
  assert.equal((await admin.endOffsets(first)).length, 3);
  // again, with another topic and another count: the existing one keeps its 3 partitions
  const again = await run('create', first, second, '--partitions', '2');
  assert.equal(again.code, 0, again.out);
  assert.match(again.out, new RegExp(`topics: created ${second} \\(2 partitions\\)`));
  assert.match(again.out, new RegExp(`topics: ${first} existed with 3 partitions \\(not 2`));
  assert.equal((await admin.endOffsets(first)).length, 3);
  assert.equal((await admin.endOffsets(second)).length, 2);
  for (const bad of [
    ['create', 'has space'],
    ['create', '..'],
    ['create'],
    ['create', 'ok', '--partitions', '0'],
    ['make', 'x'],
  ]) {
    assert.equal((await run(...bad)).code, 2, bad.join(' '));
  }
});
