import { connect } from 'node:net';
import type { TestContext } from 'node:test';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1500);
    socket.on('connect', () => done(true));
    socket.on('error', () => done(false));
    socket.on('timeout', () => done(false));
  });
}

const probes = new Map<string, Promise<boolean>>();

function probe(name: 'kafka' | 'postgres'): Promise<boolean> {
  let result = probes.get(name);
  if (!result) {
    if (name === 'kafka') {
      const [host = '127.0.0.1', port = '9092'] = defaultBrokers()[0]!.split(':');
      result = reachable(host, Number(port));
    } else {
      const url = new URL(defaultDatabaseUrl());
      result = reachable(url.hostname || '127.0.0.1', Number(url.port || 5432));
    }
    probes.set(name, result);
  }
  return result;
}

/**
 * Skips the test (with the reason) when a service is missing; under CI=true a missing service fails it instead,
 * because CI must never pass by skipping what it was meant to prove.
 */
export async function needs(t: TestContext, ...services: ('kafka' | 'postgres')[]): Promise<boolean> {
  for (const service of services) {
    if (await probe(service)) continue;
    const hint =
      service === 'kafka' ? 'start one with `bash scripts/kafka.sh start`' : 'set DATABASE_URL to a reachable server';
    if (process.env.CI === 'true') throw new Error(`${service} is not reachable (CI=true forbids skipping): ${hint}`);
    t.skip(`${service} is not reachable: ${hint}`);
    return false;
  }
  return true;
}
