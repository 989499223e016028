// The package as a user gets it: `npm pack` (which builds dist/), installed into an empty project without the Kafka
// client; a plain .mjs runs outbox → relay → consumer embedded with no TypeScript loader (and on Kafka once the client
// is added), a strict .ts app type-checks against the shipped declarations, and the CLI runs through npx.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { needs } from '../support/services.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const app = fileURLToPath(new URL('./app/', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const clientPath = 'node_modules/@confluentinc/kafka-javascript';

async function run(cwd: string, command: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { cwd, maxBuffer: 16 << 20 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  }
}

test('the packed package installs and works as a user uses it', async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'effectively-package-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));

  const pack = await run(root, 'npm', ['pack', '--silent', '--pack-destination', scratch]);
  assert.equal(pack.code, 0, pack.output);
  const tarball = readdirSync(scratch).find((file) => file.endsWith('.tgz'));
  assert.ok(tarball, pack.output);

  const project = join(scratch, 'app');
  cpSync(app, project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // From npm's cache when it has everything (the project's own install filled it), from the registry otherwise.
  const install = await run(project, 'npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    join(scratch, tarball),
  ]);
  assert.equal(install.code, 0, install.output);

  await t.test('ships dist/, bin/ and docs only: no sources, tests or TypeScript loader', () => {
    const installed = join(project, 'node_modules/effectively');
    assert.deepEqual(readdirSync(installed).sort(), ['LICENSE', 'README.md', 'bin', 'dist', 'docs', 'package.json']);
    assert.ok(existsSync(join(installed, 'dist/db/migrations/001_core.sql')), 'SQL files are copied');
    assert.ok(!existsSync(join(project, 'node_modules/tsx')), 'tsx is a devDependency');
    assert.ok(!existsSync(join(project, 'node_modules/@confluentinc')), 'the Kafka client is an optional peer');
  });

  await t.test('a plain .mjs: outbox → relay → consumer on PGlite, every order applied once', async () => {
    const { code, output } = await run(project, process.execPath, ['app.mjs', 'embedded', '20']);
    assert.equal(code, 0, output);
    assert.match(
      output,
      /app: mode=embedded orders=20 applied=20 duplicates=0 emails=20 kafka=EFF_KAFKA_CLIENT_UNAVAILABLE \(missing\)/,
    );
  });

  await t.test('the same app on Kafka once the user adds the Kafka client', async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    // The project's own build of the client (a user's install builds its native module: minutes).
    mkdirSync(join(project, 'node_modules/@confluentinc'));
    symlinkSync(join(root, 'node_modules/@confluentinc/kafka-javascript'), join(project, clientPath));
    t.after(() => rmSync(join(project, clientPath)));
    const { code, output } = await run(project, process.execPath, ['app.mjs', 'kafka', '20']);
    assert.equal(code, 0, output);
    assert.match(output, /app: mode=kafka orders=20 applied=20 duplicates=0 emails=20 kafka=loaded/);
  });

  await t.test('require() from CommonJS loads the ES modules', async () => {
    const { code, output } = await run(project, process.execPath, ['require.cjs']);
    assert.equal(code, 0, output);
    assert.match(output, /require: function function function/);
  });

  await t.test('a strict TypeScript app type-checks against the shipped declarations', async () => {
    const { code, output } = await run(project, process.execPath, [tsc, '-p', '.']);
    assert.equal(code, 0, output);
    // The declarations themselves, checked too, as a user's tsc with skipLibCheck false does: nothing of the package
    // may pull in PGlite's declarations (they need DOM and Emscripten types), so the whole check is clean.
    const checked = await run(project, process.execPath, [tsc, '-p', '.', '--skipLibCheck', 'false']);
    assert.equal(checked.code, 0, checked.output);
  });

  await t.test('npx effectively --help prints the usage with no TypeScript loader', async () => {
    const { code, output } = await run(project, 'npx', ['--no-install', 'effectively', '--help']);
    assert.equal(code, 0, output);
    assert.match(output, /usage: effectively <command>/);
    assert.doesNotMatch(output, /tsx|ERR_/);
  });
});
