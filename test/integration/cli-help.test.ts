// Issue 28 item 8: what a user types first. --version, per-command --help (it failed with a parser error), an unknown
// command said as such, and dlq list with a header row.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { dlqCommand } from '../../src/cli/dlq.ts';
import { collectedOutput } from '../../src/cli/output.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { PermanentError } from '../../src/errors.ts';
import { runCli } from '../support/cli.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('--version, <command> --help, an unknown command', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  assert.deepEqual(await runCli('--version'), { code: 0, stdout: `${version}\n`, stderr: '' });
  for (const command of ['dlq', 'topics']) {
    const help = await runCli(command, '--help');
    assert.equal(help.code, 0, `${command} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`^ {2}${command} `, 'm'));
    assert.doesNotMatch(help.stdout + help.stderr, /effectively: database/, 'help opens no database');
  }
  const unknown = await runCli('frobnicate');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^effectively: unknown command `frobnicate`/);
});

test('dlq list prints a header row above the letters', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await deadLetterStore({ schema }).keep(db, {
    consumer: 'billing',
    record: { topic: 'orders', partition: 0, offset: '4', key: null, value: null, headers: {}, timestamp: 0 },
    eventId: null,
    error: new PermanentError('no'),
    attempts: 1,
    firstFailedAt: new Date(),
  });
  const output = collectedOutput();
  assert.equal(await dlqCommand(db, 'list', { schema, json: false, dryRun: false }, output), 0);
  assert.equal(output.lines[0], 'id\tconsumer\ttopic[partition]@offset\tcode\tattempts\treason');
  assert.match(output.lines[1] ?? '', /\tbilling\torders\[0\]@4\tEFF_HANDLER_FAILED\t1x\t/);
});
