// `effectively schema check` as a child process: exit codes and the lines it prints. Needs no database, no broker.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const cli = fileURLToPath(new URL('../../bin/effectively.js', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/schemas/order-confirmed/', import.meta.url));
const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };

const run = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'schema', ...args], { env });
    return { code: 0, lines: stdout.trim().split('\n'), stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, lines: failed.stdout.trim().split('\n'), stderr: failed.stderr };
  }
};
const check = (level: string, old: string[], next: string) =>
  run('check', '--level', level, ...old.flatMap((f) => ['--old', join(examples, f)]), '--new', join(examples, next));

test('a compatible change exits 0 with one summary line', async () => {
  const result = await check('FULL', ['v1.avsc'], 'v2-currency.avsc');
  assert.equal(result.code, 0);
  assert.deepEqual(result.lines, ['schema check: compatible (level FULL, avro, against v1.avsc)']);
});

test('an incompatible change exits 1 with one line per violation, prefixed by direction and old file', async () => {
  const cents = await check('BACKWARD', ['v1.avsc'], 'v2-total-cents.avsc');
  assert.equal(cents.code, 1);
  assert.deepEqual(cents.lines, [
    'BACKWARD vs v1.avsc: field `totalCents` added without a default: old data cannot be read (a rename needs an alias: if it replaces `total`, give it "aliases": ["total"])',
    'schema check: INCOMPATIBLE, 1 violation (level BACKWARD, avro, against v1.avsc)',
  ]);
  const typed = await run(
    'check',
    '--format',
    'json',
    '--level',
    'FULL',
    '--old',
    join(examples, 'v1.json'),
    '--new',
    join(examples, 'v2-total-string.json'),
  );
  assert.equal(typed.code, 1);
  assert.deepEqual(typed.lines, [
    'BACKWARD vs v1.json: field `total` changed type integer → string: the new schema rejects integer',
    'FORWARD vs v1.json: field `total` changed type integer → string: the old schema rejects string',
    'schema check: INCOMPATIBLE, 2 violations (level FULL, json, against v1.json)',
  ]);
});

test('several --old files: the plain level checks the last, the transitive one all', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'effectively-schema-'));
  const version = (name: string, fields: unknown[]) => {
    const file = join(dir, `${name}.avsc`);
    writeFileSync(file, JSON.stringify({ type: 'record', name: 'Order', fields }));
    return file;
  };
  const v1 = version('v1', [{ name: 'a', type: 'int' }]);
  const v2 = version('v2', [
    { name: 'a', type: 'int' },
    { name: 'b', type: 'string', default: '' },
  ]);
  const v3 = version('v3', [
    { name: 'a', type: 'int' },
    { name: 'b', type: 'string' },
  ]);
  const plain = await run('check', '--level', 'BACKWARD', '--old', v1, '--old', v2, '--new', v3);
  assert.equal(plain.code, 0);
  assert.deepEqual(plain.lines, ['schema check: compatible (level BACKWARD, avro, against v2.avsc)']);
  const transitive = await run('check', '--level', 'BACKWARD_TRANSITIVE', '--old', v1, '--old', v2, '--new', v3);
  assert.equal(transitive.code, 1);
  assert.deepEqual(transitive.lines, [
    'BACKWARD vs v1.avsc: field `b` added without a default: old data cannot be read',
    'schema check: INCOMPATIBLE, 1 violation (level BACKWARD_TRANSITIVE, avro, against 2 old schemas)',
  ]);
  // The usage line's form, `--old a b`, means the same as repeated --old (it exited 2 before).
  const listed = await run('check', '--level', 'BACKWARD_TRANSITIVE', '--old', v1, v2, '--new', v3);
  assert.deepEqual(listed, transitive);
  const listedLast = await run('check', '--new', v3, '--level', 'BACKWARD', '--old', v1, v2);
  assert.deepEqual(listedLast, plain);
  // A stray positional that follows no --old is still a usage error.
  assert.equal((await run('check', v1, '--new', v3)).code, 2);
});

test('usage errors and unreadable or invalid schema files exit 2 with a clear message', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'effectively-schema-'));
  const bad = join(dir, 'bad.avsc');
  writeFileSync(bad, JSON.stringify({ type: 'record', name: 'X', fields: [{ name: 'a', type: 'Missing' }] }));
  const invalid = await run('check', '--old', bad, '--new', join(examples, 'v1.avsc'));
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /bad\.avsc: invalid Avro schema: .*unknown type `Missing`.*\(EFF_SCHEMA_INVALID\)/);
  const missing = await check('BACKWARD', ['nope.avsc'], 'v1.avsc');
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.avsc: ENOENT/);
  const level = await check('SIDEWAYS', ['v1.avsc'], 'v1.avsc');
  assert.equal(level.code, 2);
  assert.match(level.stderr, /--level must be one of BACKWARD, BACKWARD_TRANSITIVE/);
  const noOld = await run('check', '--new', join(examples, 'v1.avsc'));
  assert.equal(noOld.code, 2);
  assert.match(noOld.stderr, /usage: effectively schema check/);
});

test('--level is read in any case: backward is BACKWARD', async () => {
  const result = await check('backward', ['v1.avsc'], 'v2-currency.avsc');
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.lines, ['schema check: compatible (level BACKWARD, avro, against v1.avsc)']);
});
