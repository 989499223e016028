// npm run chaos -- --events N --kills K [--concurrent PARTITIONS] [--restart-broker B] [--restart-postgres P] [--timeout S]
//   [--nodes 3 [--kill-broker-for-good NODE] | --private-broker] [--kill-roles relay,consumer] [--mode effectively|no-dedup|offset-first|no-outbox] [--rate R]
//   [--private-postgres] [--keep] [--big-every N (every Nth event carries 1-5 MB)] [--keys K (orders share K keys; order audited)]
//   [--net-faults [--net-fault-count N]] [--relay poll|wal] [--transport kafka|kafka-js (the pure-JavaScript client)]
// Runs the order writer, the relay and the notification consumer as child processes on real Kafka + PostgreSQL,
// SIGKILLs relay and consumer K times (half of them at named hops), SIGKILLs the broker and starts it again B times,
// restarts PostgreSQL P times (the project's private cluster, scripts/postgres.sh), and audits: every order exactly one
// e-mail. With --nodes 3 it runs on the three-node cluster of scripts/kafka.sh (started when needed) and may kill one
// node for good. Exit 0 complete, 1 something lost or doubled, 2 stopped before everything was delivered (see
// docs/dev/chaos.md).
import { parseArgs } from 'node:util';
import { privateBroker } from './brokers.ts';
import { ending } from './ending.ts';
import { netFaultLines } from './net-faults.ts';
import { runChaos } from './run.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    kills: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'effectively' },
    concurrent: { type: 'string', default: '0' },
    rate: { type: 'string' },
    'big-every': { type: 'string', default: '0' },
    keys: { type: 'string', default: '0' },
    relay: { type: 'string', default: 'poll' },
    transport: { type: 'string', default: 'kafka' },
    'restart-broker': { type: 'string', default: '0' },
    'restart-postgres': { type: 'string', default: '0' },
    'private-postgres': { type: 'boolean', default: false },
    nodes: { type: 'string', default: '1' },
    'private-broker': { type: 'boolean', default: false },
    'kill-broker-for-good': { type: 'string' },
    'kill-roles': { type: 'string' },
    timeout: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'net-faults': { type: 'boolean', default: false },
    'net-fault-count': { type: 'string' },
  },
});

// SIGINT/SIGTERM stop the run as its deadline would: the children are stopped, the audit and the ending still printed,
// the schema and topic dropped. A second signal ends the process at once.
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
  });
}

const mode = values.mode as 'effectively' | 'no-dedup' | 'offset-first' | 'no-outbox';
const started = Date.now();
const result = await runChaos({
  events: Number(values.events),
  kills: Number(values.kills),
  mode,
  concurrent: Number(values.concurrent),
  bigEvery: Number(values['big-every']),
  keys: Number(values.keys),
  relay: values.relay === 'wal' ? 'wal' : 'poll',
  transport: values.transport === 'kafka-js' ? 'kafka-js' : 'kafka',
  restartBroker: Number(values['restart-broker']),
  restartPostgres: Number(values['restart-postgres']),
  privatePostgres: values['private-postgres'],
  brokers: values['private-broker'] ? privateBroker() : { nodes: Number(values.nodes) },
  ...(values['kill-broker-for-good'] ? { killBrokerForGood: Number(values['kill-broker-for-good']) } : {}),
  ...(values['kill-roles']
    ? { killRoles: values['kill-roles'].split(',') as ('relay' | 'consumer' | 'writer')[] }
    : {}),
  ...(values.rate ? { rate: Number(values.rate) } : {}),
  ...(values.timeout ? { timeoutMs: Number(values.timeout) * 1000 } : {}),
  keep: values.keep,
  ...(values['net-faults']
    ? { netFaults: Number(values['net-fault-count'] ?? Math.max(6, Math.ceil(Number(values.kills) / 2))) }
    : {}),
  signal: stop.signal,
  log: (line) => console.log(line),
});
console.log(
  `chaos: mode=${mode}${result.config.transport === 'kafka-js' ? ' transport=kafka-js' : ''}${result.config.relay === 'wal' ? ' relay=wal' : ''}${result.config.concurrent ? ` concurrent=key,partitions=${result.config.concurrent}` : ''} orders=${result.orders} emails=${result.emails} kills_at=${JSON.stringify(result.killsAt)} restarts=${JSON.stringify(result.restarts)}${result.brokerKilledForGood ? ` broker_killed_for_good=${result.brokerKilledForGood}` : ''} crashes=${result.crashes} kills_late=${result.killsLate} seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
);
const byKind: Record<string, number> = {};
for (const fault of result.netFaults) byKind[fault.kind] = (byKind[fault.kind] ?? 0) + 1;
if (result.netFaults.length > 0) console.log(`chaos: net_faults=${JSON.stringify(byKind)}`);
for (const line of netFaultLines(result.netFaults)) console.log(line);
const end = ending(result);
for (const line of end.lines) console.log(line);
if (result.outOfOrder !== null) {
  console.log(`chaos: per-key order keys=${result.config.keys} out_of_order=${result.outOfOrder}`);
  if (result.outOfOrder > 0) process.exit(1);
}
process.exit(end.exitCode);
