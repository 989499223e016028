// The WAL relay tests' shared parts: a relay on the private cluster (started, its slot made, closed after the test),
// numbered events, a producer whose sends a test can hold or fail, and the relay in a child process that kills itself
// at its crash point (test/integrity/wal-relay.child.ts).
import { spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { Relay, RelayOptions, WalOptions } from '../../src/outbox/relay-options.ts';
import type { OutgoingRecord, Producer, Transport } from '../../src/transport/port.ts';
import { slotReady, type WalCluster } from './wal-cluster.ts';

export interface WalRelayExtra extends Partial<Omit<RelayOptions, 'db' | 'schema' | 'source'>> {
  /** A naive twin's mistake (`wal.unsafe`). */
  unsafe?: WalOptions['unsafe'];
}

/** A WAL relay of `schema` on the cluster, publishing through `transport` (or `extra.producerFactory`). */
export function walRelay(cluster: WalCluster, db: Db, schema: string, transport: Transport, extra: WalRelayExtra = {}) {
  const { unsafe, wal, ...rest } = extra;
  return createRelay({
    db,
    schema,
    source: 'wal',
    producerFactory: () => transport.producer(),
    logger: silentLogger,
    errorBackoffMs: 200,
    ...rest,
    wal: { connectionString: cluster.url, ...wal, ...(unsafe ? { unsafe } : {}) },
  });
}

/** `walRelay`, started once its slot is made, closed after the test. */
export async function startedWalRelay(
  t: TestContext,
  cluster: WalCluster,
  db: Db,
  schema: string,
  transport: Transport,
  extra: WalRelayExtra = {},
): Promise<Relay> {
  const relay = walRelay(cluster, db, schema, transport, extra);
  t.after(() => relay.close());
  await relay.start();
  await slotReady(db, schema);
  return relay;
}

/** One transaction of `count` events numbered from `from` (`data.n`), keys `k<n % keys>` or all `key`. */
export async function enqueueNumbered(
  db: Db,
  schema: string,
  topic: string,
  from: number,
  count: number,
  keys = 4,
  key?: string,
): Promise<void> {
  const outbox = createOutbox({ schema });
  await db.transaction((tx) =>
    outbox.enqueue(
      tx,
      Array.from({ length: count }, (_, i) =>
        createEvent({ topic, type: 't', source: '/wal', key: key ?? `k${(from + i) % keys}`, data: { n: from + i } }),
      ),
    ),
  );
}

/** The `data.n` of each record. */
export const numbers = (records: readonly { value: Buffer | null }[]): number[] =>
  records.map((record) => (JSON.parse(record.value!.toString()) as { n: number }).n);

/**
 * A producer factory: the transport's producer (a new one each call, as the relay replaces a failed one), `before`
 * running ahead of each send (to hold it, or throw instead of sending).
 */
export function heldProducer(transport: Transport, before: (records: readonly OutgoingRecord[]) => Promise<void>) {
  return (): Producer => {
    const real = transport.producer();
    return {
      connect: () => real.connect(),
      close: () => real.close(),
      async send(records: readonly OutgoingRecord[]) {
        await before(records);
        await real.send(records);
      },
    };
  };
}

const child = fileURLToPath(new URL('../integrity/wal-relay.child.ts', import.meta.url));

/** Runs the relay child until it exits (it kills itself at its crash point; killed after 30 s); returns its stdout. */
export function runWalChild(cluster: WalCluster, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, ['--import', 'tsx', child], {
      env: { ...process.env, WAL_URL: cluster.url, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let said = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    const timer = setTimeout(() => process_.kill('SIGKILL'), 30_000);
    process_.on('error', reject);
    process_.on('exit', () => {
      clearTimeout(timer);
      resolve(said);
    });
  });
}
