// npm run chaos -- --events N --kills K [--restart-broker B] [--restart-postgres P] [--timeout S]
//   [--mode effectively|no-dedup|offset-first|no-outbox] [--rate R] [--private-postgres] [--keep]
// Runs the order writer, the relay and the notification consumer as child processes on real Kafka + PostgreSQL,
// SIGKILLs relay and consumer K times (half of them at named hops), SIGKILLs the broker and starts it again B times,
// restarts PostgreSQL P times (the project's private cluster, scripts/postgres.sh), and audits: every order exactly one
// e-mail. Exit 0 complete, 1 something lost or doubled, 2 stopped before everything was delivered (see docs/chaos.md).
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { ending } from './ending.ts';
import { runChaos } from './run.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    kills: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'effectively' },
    rate: { type: 'string' },
    'restart-broker': { type: 'string', default: '0' },
    'restart-postgres': { type: 'string', default: '0' },
    'private-postgres': { type: 'boolean', default: false },
    timeout: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

function reachable(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host: host ?? '127.0.0.1', port: Number(port ?? 9092) });
    socket.setTimeout(1000);
    socket
      .on('connect', () => resolve(true))
      .on('error', () => resolve(false))
      .on('timeout', () => resolve(false));
  }).finally(() => undefined) as Promise<boolean>;
}

if (!(await reachable(defaultBrokers()[0]!))) {
  console.log('chaos: no Kafka broker reachable; starting the project broker (scripts/kafka.sh start)');
  execFileSync('bash', [fileURLToPath(new URL('../../scripts/kafka.sh', import.meta.url)), 'start'], {
    stdio: 'inherit',
  });
}

const mode = values.mode as 'effectively' | 'no-dedup' | 'offset-first' | 'no-outbox';
const started = Date.now();
const result = await runChaos({
  events: Number(values.events),
  kills: Number(values.kills),
  mode,
  restartBroker: Number(values['restart-broker']),
  restartPostgres: Number(values['restart-postgres']),
  privatePostgres: values['private-postgres'],
  ...(values.rate ? { rate: Number(values.rate) } : {}),
  ...(values.timeout ? { timeoutMs: Number(values.timeout) * 1000 } : {}),
  keep: values.keep,
  log: (line) => console.log(line),
});
console.log(
  `chaos: mode=${mode} orders=${result.orders} emails=${result.emails} kills_at=${JSON.stringify(result.killsAt)} restarts=${JSON.stringify(result.restarts)} crashes=${result.crashes} seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
);
const end = ending(result);
for (const line of end.lines) console.log(line);
process.exit(end.exitCode);
