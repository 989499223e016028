// Whole-service outages the kit injects: the Kafka broker SIGKILLed and started again, the private PostgreSQL cluster
// (scripts/postgres.sh) restarted. Each resolves once the service answers again, with how long it was down.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sleep } from '../../src/observability/sleep.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';

const run = promisify(execFile);
const script = (name: string) => fileURLToPath(new URL(`../../scripts/${name}`, import.meta.url));
const kafkaHome = () => process.env.KAFKA_HOME_DIR ?? fileURLToPath(new URL('../../.kafka', import.meta.url));

function listening(address: string): Promise<boolean> {
  const [host = '127.0.0.1', port = '9092'] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000);
    socket
      .on('connect', () => done(true))
      .on('error', () => done(false))
      .on('timeout', () => done(false));
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The broker's pid: the one scripts/kafka.sh wrote, else the `kafka.Kafka` process (one broker on this machine). */
async function brokerPid(): Promise<number> {
  const pidFile = `${kafkaHome()}/broker.pid`;
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (pid > 0 && alive(pid)) return pid;
  }
  const { stdout } = await run('pgrep', ['-f', 'kafka\\.Kafka']).catch(() => ({ stdout: '' }));
  const pids = stdout.split('\n').filter(Boolean).map(Number);
  if (pids.length !== 1) throw new Error(`chaos: cannot tell which process is the broker (found ${pids.length})`);
  return pids[0]!;
}

/** SIGKILLs the broker (no clean shutdown, as a crash) and starts it again; returns the seconds it was down. */
export async function restartBroker(): Promise<number> {
  const down = Date.now();
  if (/^\s*kill\)/m.test(readFileSync(script('kafka.sh'), 'utf8'))) {
    // scripts/kafka.sh kill: SIGKILLs the broker it started, waits until it is gone, keeps its data.
    await run('bash', [script('kafka.sh'), 'kill'], { timeout: 60_000 });
  } else {
    const pid = await brokerPid();
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(50);
  }
  // A broker that kafka.sh did not start (no pid file), or one someone else started meanwhile on the same port, would
  // still answer: say so rather than claim a restart.
  // A SIGKILLed JVM closes its sockets a moment after its pid looks gone (its memory is released first): wait for that.
  const closing = Date.now() + 10_000;
  while ((await listening(defaultBrokers()[0]!)) && Date.now() < closing) await sleep(100);
  if (await listening(defaultBrokers()[0]!)) {
    throw new Error(
      'the broker still answers after the kill (not started by scripts/kafka.sh, or started again by someone else)',
    );
  }
  // scripts/kafka.sh start waits until the broker logs that it started (unfenced and serving).
  await run('bash', [script('kafka.sh'), 'start'], { timeout: 180_000 });
  return (Date.now() - down) / 1000;
}

/** Starts the private cluster (idempotent) and returns its connection string. */
export async function startPrivatePostgres(): Promise<string> {
  await run('bash', [script('postgres.sh'), 'start'], { timeout: 120_000 });
  const { stdout } = await run('bash', [script('postgres.sh'), 'url']);
  return stdout.trim();
}

/**
 * Restarts the private cluster: a fast shutdown (every session cut with 57P01, new ones refused with 57P03 meanwhile),
 * `downMs` with no server at all, then a start; returns the seconds it was down.
 */
export async function restartPostgres(downMs = 2000): Promise<number> {
  const down = Date.now();
  await run('bash', [script('postgres.sh'), 'stop'], { timeout: 120_000 });
  await sleep(downMs);
  await run('bash', [script('postgres.sh'), 'start'], { timeout: 120_000 });
  return (Date.now() - down) / 1000;
}
