// Private brokers for tests of scripts/kafka.sh itself: their own data directory and ports, never the shared broker
// on 9092 (other tests and people use it).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/kafka.sh');

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive free ports on 127.0.0.1, starting at an even port below the kernel's ephemeral range (32768+
 * on Linux), so an outgoing connection cannot take one between this check and the broker's bind.
 */
export async function freePorts(count: number): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const base = 20_000 + 2 * Math.floor(Math.random() * 6_000);
    let free = true;
    for (let port = base; port < base + count && free; port++) free = await listenable(port);
    if (free) return base;
  }
  throw new Error('no free ports for a private broker');
}

export interface KafkaScript {
  /** Runs `kafka.sh <args>`; throws with its output when it fails (unless `allowFailure`). */
  run(args: string[], allowFailure?: boolean): { status: number | null; stdout: string; stderr: string };
  home: string;
  /** The script's own settings (home, jars, ports): what another caller of kafka.sh needs to reach this broker. */
  env: Record<string, string>;
  /** Closes a client of these brokers after the test, before they stop (last registered, first closed). */
  closeFirst(close: () => unknown): void;
}

/**
 * The broker script with a private home and the given port settings; after the test `kafka.sh stop <stopArgs>` runs
 * and the home is deleted (clients registered with `closeFirst` are closed before). Skips when java is missing, except under CI=true, where nothing may skip.
 */
export function kafkaScript(
  t: TestContext,
  env: Record<string, string>,
  stopArgs: string[] = [],
): KafkaScript | undefined {
  if (spawnSync('java', ['-version']).status !== 0) {
    if (process.env.CI === 'true') throw new Error('java is missing (CI=true forbids skipping): install Java 17+');
    t.skip('java is missing: the broker script needs Java 17+');
    return undefined;
  }
  const home = mkdtempSync(join(tmpdir(), 'effectively-kafka-'));
  const ownEnv: Record<string, string> = {
    KAFKA_HOME_DIR: home,
    // The jars the project broker uses (fetched there once), not a second download.
    KAFKA_LIBS: process.env.KAFKA_LIBS ?? join(root, '.kafka/libs'),
    ...env,
  };
  const fullEnv = { ...process.env, ...ownEnv };
  const run = (args: string[], allowFailure = false) => {
    const result = spawnSync('bash', [script, ...args], { env: fullEnv, encoding: 'utf8', timeout: 300_000 });
    if (!allowFailure && result.status !== 0) {
      throw new Error(`kafka.sh ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    }
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const closers: (() => unknown)[] = [];
  t.after(async () => {
    // Clients first: a client closing against stopped brokers waits for them and logs failed connections.
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    run(['stop', ...stopArgs], true);
    rmSync(home, { recursive: true, force: true });
  });
  return { run, home, env: ownEnv, closeFirst: (close) => closers.push(close) };
}
