// One pipeline instance as a child process of the scenario. Configured by environment variables; at a named point
// it can SIGKILL itself (PIPELINE_CRASH_AT) or SIGSTOP itself (PIPELINE_STOP_AT), once it has seen an input whose
// sequence number reaches PIPELINE_ARM_AT_SEQ. SIGTERM closes it cleanly.
import { writeSync } from 'node:fs';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger, stderrLogger } from '../../src/observability/logger.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { PipelineFaultPoint, PipelineGuarantee } from '../../src/pipeline/types.ts';
import { isPoison, parseInput } from './records.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const crashAt = process.env.PIPELINE_CRASH_AT as PipelineFaultPoint | undefined;
const stopAt = process.env.PIPELINE_STOP_AT as PipelineFaultPoint | undefined;
const armAtSeq = Number(process.env.PIPELINE_ARM_AT_SEQ ?? '0');
let armed = false;

const say = (line: string) => writeSync(1, `${line}\n`);

const pipeline = createPipeline({
  from: env('PIPELINE_IN'),
  to: env('PIPELINE_OUT'),
  deadLetterTopic: env('PIPELINE_DLT'),
  group: env('PIPELINE_GROUP'),
  transactionalId: env('PIPELINE_TXID'),
  guarantee: env('PIPELINE_GUARANTEE') as PipelineGuarantee,
  maxBatchSize: Number(process.env.PIPELINE_BATCH ?? '500'),
  sessionTimeoutMs: 6000,
  ...(process.env.PIPELINE_TXN_TIMEOUT_MS ? { transactionTimeoutMs: Number(process.env.PIPELINE_TXN_TIMEOUT_MS) } : {}),
  commitIntervalMs: Number(process.env.PIPELINE_COMMIT_INTERVAL_MS ?? '0'),
  logger: process.env.PIPELINE_DEBUG ? stderrLogger : silentLogger,
  transform: (record) => {
    const input = parseInput(record);
    if (input.seq >= armAtSeq) armed = true;
    if (isPoison(input.seq)) throw new PermanentError(`input ${input.seq} is poison`);
    return {
      partition: record.partition,
      key: record.key,
      // A padded input makes an output as large (the output topic may refuse it: then it is this input's dead letter).
      value: JSON.stringify({
        seq: input.seq,
        square: input.seq * input.seq,
        ...(input.pad ? { pad: input.pad } : {}),
      }),
      headers: { seq: String(input.seq) },
    };
  },
  onFailure: (failure) => say(`failure:${failure.action}:${failure.codeName}:${failure.step}`),
  faults: (point) => {
    if (!armed) return;
    if (point === crashAt) {
      say(`crash-at:${point}`);
      process.kill(process.pid, 'SIGKILL');
    }
    if (point === stopAt) {
      armed = false;
      say(`stop-at:${point}`);
      process.kill(process.pid, 'SIGSTOP');
      say('continued');
    }
  },
});

process.on('SIGTERM', () => {
  void pipeline.close().then(() => {
    say(`closed:${JSON.stringify(pipeline.stats())}`);
    process.exit(0);
  });
});
await pipeline.start();
say('ready');
if (process.env.PIPELINE_DEBUG)
  setInterval(
    () => process.stderr.write(`${process.env.PIPELINE_TXID} ${JSON.stringify(pipeline.stats())}\n`),
    2000,
  ).unref();
