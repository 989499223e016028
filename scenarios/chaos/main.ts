// npm run chaos -- --events N --kills K [--mode effectively|no-dedup|offset-first|no-outbox] [--rate R] [--keep]
// Runs the order writer, the relay and the notification consumer as child processes on real Kafka + PostgreSQL,
// SIGKILLs relay and consumer K times (half of them at named hops) and audits: every order exactly one e-mail.
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { runChaos } from './run.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    kills: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'effectively' },
    rate: { type: 'string' },
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
  ...(values.rate ? { rate: Number(values.rate) } : {}),
  keep: values.keep,
  log: (line) => console.log(line),
});
console.log(
  `chaos: mode=${mode} orders=${result.orders} emails=${result.emails} kills_at=${JSON.stringify(result.killsAt)} seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
);
console.log(`chaos: events=${result.events} kills=${result.kills} lost=${result.lost} duplicated=${result.duplicated}`);
process.exit(result.lost === 0 && result.duplicated === 0 ? 0 : 1);
