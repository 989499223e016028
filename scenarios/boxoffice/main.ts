// npm run scenario -- notification-system | payment-system | retry-storm [--transport embedded|kafka] [--orders N]
// [--short]: one boxoffice scenario, its audit line (counted from the services' tables and the providers' logs) and
// the path of its report. Embedded by default (PGlite in this process, no server); kafka: the broker and the
// PostgreSQL server, in topics and a schema of the run's own.
import { parseArgs } from 'node:util';
import { runScenario } from './scenario.ts';
import { type StoryName, stories, storyNames } from './stories.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    transport: { type: 'string', default: 'embedded' },
    orders: { type: 'string' },
    short: { type: 'boolean', default: false },
  },
});
const name = positionals[0] as StoryName;
if (!storyNames.includes(name)) throw new Error(`the scenario must be one of ${storyNames.join(', ')}`);
const transport = values.transport;
if (transport !== 'embedded' && transport !== 'kafka') throw new Error('--transport must be embedded or kafka');
const orders = Number(values.orders ?? (values.short ? 40 : 1000));
if (!Number.isInteger(orders) || orders < 10) throw new Error('--orders must be an integer of at least 10');

const result = await runScenario({
  ...stories[name](values.short),
  scenario: name,
  transport,
  orders,
  log: (line) => console.log(line),
});
console.log(
  `${name}: crashes ${result.crashes.length} (${result.crashes.join(', ')})${result.missed.length > 0 ? `, not reached: ${result.missed.join(', ')}` : ''}; ` +
    `poison order: ${result.audit.poisoned} dead letters, alert after ${result.alertAfterS?.toFixed(1) ?? '-'} s; ` +
    `${result.audit.refused} orders refused (sold out, ${result.audit.uncompensated} not cancelled); e-mail calls at most ${result.maxCallsPerSecond}/s (limit ${result.emailRate}/s); ${result.seconds.toFixed(1)} s`,
);
if (result.report) console.log(`report: ${result.report}`);
console.log(result.line);
process.exitCode = result.ok ? 0 : 1;
