// The Kafka side of the chaos run: which brokers it uses (the project broker, a private one a test started, or the
// three-node cluster of scripts/kafka.sh), and the broker outages it injects: a SIGKILL followed by a start, or a
// node killed for good.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sleep } from '../../src/observability/sleep.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/kafka.sh', import.meta.url));

/** The brokers of a run and how scripts/kafka.sh reaches them. */
export interface BrokerSetup {
  /** Nodes: 1 is a single broker (`kafka.sh start`), more a cluster (`kafka.sh start --nodes N`). */
  nodes: number;
  /**
   * Environment for scripts/kafka.sh (KAFKA_HOME_DIR, KAFKA_PORT, KAFKA_CONTROLLER_PORT, KAFKA_CLUSTER_PORT...): a
   * private broker of its own, so killing it harms nobody else's. Default: the project's (`.kafka/`, 9092).
   */
  env?: Record<string, string>;
  /** Bootstrap list; default `kafka.sh brokers` (`KAFKA_BROKERS` or 127.0.0.1:9092 for the project broker). */
  brokers?: string[];
}

const nodeArgs = (setup: BrokerSetup) => (setup.nodes > 1 ? ['--nodes', String(setup.nodes)] : []);

function kafkaSh(setup: BrokerSetup, args: string[], timeout = 180_000) {
  return run('bash', [script, ...args], { env: { ...process.env, ...setup.env }, timeout });
}

export function listening(address: string): Promise<boolean> {
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

/**
 * A single broker of the kit's own (`--private-broker`): home `.kafka/private`, port `CHAOS_KAFKA_PORT` (default
 * 29092, controller one above), the project's jars. Its restarts kill nobody else's broker (9092 is shared).
 */
export function privateBroker(): BrokerSetup {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const port = Number(process.env.CHAOS_KAFKA_PORT ?? 29092);
  return {
    nodes: 1,
    env: {
      KAFKA_HOME_DIR: `${root}.kafka/private`,
      KAFKA_LIBS: process.env.KAFKA_LIBS ?? `${root}.kafka/libs`,
      KAFKA_PORT: String(port),
      KAFKA_CONTROLLER_PORT: String(port + 1),
    },
  };
}

/** Stops the brokers of `setup` (a run stops those it started). */
export async function stopBrokers(setup: BrokerSetup): Promise<void> {
  await kafkaSh(setup, ['stop', ...nodeArgs(setup)], 120_000);
}

/**
 * The bootstrap list of `setup`, its brokers started first when they are not all answering (a cluster node killed for
 * good by an earlier run is started again here; `startedHere` then). The project's single broker is left alone when
 * it answers.
 */
export async function readyBrokers(
  setup: BrokerSetup,
  log: (line: string) => void,
): Promise<{ brokers: string[]; startedHere: boolean }> {
  const brokers =
    setup.brokers ??
    (setup.nodes > 1 || setup.env
      ? (await kafkaSh(setup, ['brokers', ...nodeArgs(setup)]).catch(() => ({ stdout: '' }))).stdout
          .trim()
          .split(',')
          .filter(Boolean)
      : defaultBrokers());
  const up = brokers.length > 0 && (await Promise.all(brokers.map(listening))).every(Boolean);
  if (
    up &&
    (setup.nodes === 1 ||
      (await kafkaSh(setup, ['status', ...nodeArgs(setup)]).then(
        () => true,
        () => false,
      )))
  )
    return { brokers, startedHere: false };
  log(`chaos: starting the brokers (scripts/kafka.sh ${['start', ...nodeArgs(setup)].join(' ')})`);
  await kafkaSh(setup, ['start', ...nodeArgs(setup)], 300_000);
  if (setup.brokers) return { brokers: setup.brokers, startedHere: true };
  const { stdout } = await kafkaSh(setup, ['brokers', ...nodeArgs(setup)]);
  return { brokers: stdout.trim().split(',').filter(Boolean), startedHere: true };
}

/** Port of cluster node n (scripts/kafka.sh: the first node's port, +2 per node). */
function nodeAddress(brokers: string[], node: number): string {
  return brokers[node - 1] ?? brokers[0]!;
}

/** Waits until `address` no longer accepts (a SIGKILLed JVM closes its sockets a moment after its pid looks gone). */
async function closed(address: string): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await listening(address)) && Date.now() < until) await sleep(100);
  if (await listening(address)) {
    throw new Error(
      `${address} still answers after the kill (not started by scripts/kafka.sh, or started again by someone else)`,
    );
  }
}

/**
 * SIGKILLs a broker (no clean shutdown, as a crash) and starts it again; returns the seconds it was down. On a
 * cluster, restart `j` takes node (j mod N) + 1, skipping `spare` (a node killed for good stays down).
 */
export async function restartBroker(setup: BrokerSetup, brokers: string[], j: number, spare?: number): Promise<number> {
  const down = Date.now();
  if (setup.nodes > 1) {
    const candidates = Array.from({ length: setup.nodes }, (_, i) => i + 1).filter((n) => n !== spare);
    const node = candidates[j % candidates.length]!;
    await kafkaSh(setup, ['kill-node', String(node)], 60_000);
    await closed(nodeAddress(brokers, node));
    await kafkaSh(setup, ['start-node', String(node)]);
  } else {
    // kafka.sh kill SIGKILLs the broker it started, waits until it is gone and keeps its data.
    await kafkaSh(setup, ['kill'], 60_000);
    await closed(brokers[0]!);
    // kafka.sh start waits until the broker logs that it started (unfenced and serving).
    await kafkaSh(setup, ['start']);
  }
  return (Date.now() - down) / 1000;
}

/** SIGKILLs cluster node `node` and leaves it down (the next run's `readyBrokers` starts it again). */
export async function killBrokerForGood(setup: BrokerSetup, brokers: string[], node: number): Promise<void> {
  if (setup.nodes < 2)
    throw new Error('--kill-broker-for-good needs a cluster (--nodes 3): one broker is all there is');
  if (node < 1 || node > setup.nodes) throw new Error(`node ${node} is not in this cluster of ${setup.nodes}`);
  await kafkaSh(setup, ['kill-node', String(node)], 60_000);
  await closed(nodeAddress(brokers, node));
}
