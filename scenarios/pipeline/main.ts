// npm run scenario -- pipeline [--inputs N] [--partitions P] [--kills K] [--naive] [--big-bytes B] [--commit-interval-ms M]
// Kafka→Kafka exactly once under SIGKILL; ends with the audit line.
import { parseArgs } from 'node:util';
import { resultLine, runPipeline } from './run.ts';

const { values } = parseArgs({
  options: {
    inputs: { type: 'string', default: '3000' },
    partitions: { type: 'string', default: '4' },
    kills: { type: 'string', default: '3' },
    naive: { type: 'boolean', default: false },
    'timeout-s': { type: 'string', default: '600' },
    // One input of B bytes (e.g. 2097152) whose output the output topic refuses: it must end dead-lettered.
    'big-bytes': { type: 'string', default: '0' },
    // The pipeline's commitIntervalMs: one transaction over several partitions' batches (0: one per batch).
    'commit-interval-ms': { type: 'string', default: '0' },
  },
});

const result = await runPipeline({
  inputs: Number(values.inputs),
  partitions: Number(values.partitions),
  kills: Number(values.kills),
  guarantee: values.naive ? 'at-least-once' : 'exactly-once',
  timeoutMs: Number(values['timeout-s']) * 1000,
  bigBytes: Number(values['big-bytes']),
  commitIntervalMs: Number(values['commit-interval-ms']),
  log: (line) => console.log(line),
});
console.log(
  `pipeline: dead_lettered=${result.deadLettered} misrouted=${result.misrouted} out_of_order=${result.outOfOrder} ` +
    `offsets_at_end=${result.offsetsAtEnd} kills_at=${JSON.stringify(result.killsAt)} seconds=${result.seconds}`,
);
console.log(resultLine(result));
const ok =
  result.duplicates === 0 &&
  result.lost === 0 &&
  result.outputs === result.inputs &&
  result.misrouted === 0 &&
  result.outOfOrder === 0 &&
  result.offsetsAtEnd;
process.exitCode = ok ? 0 : 1;
