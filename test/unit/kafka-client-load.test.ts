// Why the Kafka client did not load, told apart (issue 28, item 6): the package missing, installed but its native
// module never built (its install script did not run: npm 11's allowScripts policy, --ignore-scripts), built but not
// loading, and built for another Node. Each is the same code with its own reason and way out; before, a client whose
// install script never ran was blamed on a Node version mismatch. Real loads of a copy of the client's JavaScript in
// a project of its own (no native module, then a file that is not one), no services.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { requireKafkaClient } from '../../src/transport/kafka/client.ts';
import { kafkaClientFailure } from '../../src/transport/kafka/client-unavailable.ts';

const here = createRequire(import.meta.url);
const client = dirname(here.resolve('@confluentinc/kafka-javascript/package.json'));

/** A project whose node_modules holds the client's JavaScript (no build/) and the loader it uses. */
function projectWithClient(t: { after(fn: () => void): void }): { from: URL; clientDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'h-kafka-load-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const clientDir = join(root, 'node_modules/@confluentinc/kafka-javascript');
  mkdirSync(clientDir, { recursive: true });
  for (const file of ['package.json', 'librdkafka.js', 'lib'])
    cpSync(join(client, file), join(clientDir, file), { recursive: true });
  const clientRequire = createRequire(join(client, 'package.json'));
  for (const name of ['bindings', 'file-uri-to-path']) {
    symlinkSync(dirname(clientRequire.resolve(`${name}/package.json`)), join(root, 'node_modules', name));
  }
  return { from: pathToFileURL(join(root, 'app.js')), clientDir };
}

const failure = (from: URL) => {
  try {
    requireKafkaClient(from);
  } catch (error) {
    return error as { code?: string; message: string; details?: { reason?: string; missing?: boolean } };
  }
  assert.fail('the client loaded');
};

test('the package not installed: missing, npm install it', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'h-kafka-load-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const error = failure(pathToFileURL(join(root, 'app.js')));
  assert.equal(error.code, 'EFF_KAFKA_CLIENT_UNAVAILABLE');
  assert.equal(error.details?.reason, 'missing');
  assert.equal(error.details?.missing, true);
  assert.match(error.message, /npm install @confluentinc\/kafka-javascript/);
});

test('installed, its install script never ran (no native module): not-built, allow the script and rebuild; no Node blamed', (t) => {
  const { from } = projectWithClient(t);
  const error = failure(from);
  assert.equal(error.code, 'EFF_KAFKA_CLIENT_UNAVAILABLE');
  assert.equal(error.details?.reason, 'not-built');
  assert.equal(error.details?.missing, false);
  assert.match(error.message, /never built/);
  assert.match(error.message, /allowScripts/);
  assert.match(error.message, /CKJS_LINKING=dynamic npm rebuild @confluentinc\/kafka-javascript/);
  assert.doesNotMatch(error.message, /another Node/);
});

test('a native module that does not load: load-failed, with the loader’s reason', (t) => {
  const { from, clientDir } = projectWithClient(t);
  mkdirSync(join(clientDir, 'build/Release'), { recursive: true });
  writeFileSync(join(clientDir, 'build/Release/confluent-kafka-javascript.node'), 'not a shared object');
  const error = failure(from);
  assert.equal(error.details?.reason, 'load-failed');
  assert.match(error.message, /is built .* but its native module does not load/);
  assert.doesNotMatch(error.message, /never built/);
});

test('built for another Node (NODE_MODULE_VERSION): other-node, rebuild with --update-binary', () => {
  const dlopen = Object.assign(
    new Error(
      "The module '/x/confluent-kafka-javascript.node' was compiled against a different Node.js version using " +
        'NODE_MODULE_VERSION 137. This version of Node.js requires NODE_MODULE_VERSION 115.',
    ),
    { code: 'ERR_DLOPEN_FAILED' },
  );
  assert.equal(kafkaClientFailure(dlopen, { built: true }), 'other-node');
  assert.equal(kafkaClientFailure(dlopen, { built: false }), 'not-built');
});

test('the project’s own installed client loads (none of the above)', () => {
  assert.equal(typeof requireKafkaClient(import.meta.url).KafkaJS.Kafka, 'function');
});
