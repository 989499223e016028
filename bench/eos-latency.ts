// A read_committed reader's latency behind the pipeline: inputs sent at a steady rate, each output's time from its
// input's send to a read_committed reader receiving it; at-least-once, exactly-once by default (a transaction per
// partition batch) and exactly-once with `commitIntervalMs` 100 (a window per fetch), one after the other in one run.
import { createTopics, deleteTopics, scenarioKafka } from '../scenarios/pipeline/topics.ts';
import type { Kafka } from '../src/transport/kafka/client.ts';
import { copyPipeline } from './copy-pipeline.ts';
import { percentile } from './support.ts';

export interface ReaderLatency {
  p50_ms: number;
  p99_ms: number;
}

export interface EosLatencyResult {
  rate: number;
  alo: ReaderLatency;
  eos: ReaderLatency;
  window: ReaderLatency;
}

const warmup = 20;

async function readerLatency(kafka: Kafka, side: 'alo' | 'eos' | 'window', rate: number, seconds: number) {
  const topics = await createTopics(kafka, 6);
  const { group, pipeline } = copyPipeline(topics, side, {
    guarantee: side === 'alo' ? 'at-least-once' : 'exactly-once',
    commitIntervalMs: side === 'window' ? 100 : undefined,
  });
  const reader = kafka.consumer({
    kafkaJS: { groupId: `${group}-reader`, fromBeginning: true, autoCommit: false },
    'isolation.level': 'read_committed',
    'fetch.wait.max.ms': 10,
  });
  const producer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 }, 'linger.ms': 0 });
  const latencies: number[] = [];
  let received = 0;
  let allIn = () => {};
  const total = warmup + rate * seconds;
  const done = new Promise<void>((resolve) => {
    allIn = resolve;
  });
  try {
    await producer.connect();
    await reader.connect();
    await reader.subscribe({ topics: [topics.output] });
    await reader.run({
      eachMessage: async ({ message }) => {
        const { seq, at } = JSON.parse(message.value!.toString()) as { seq: number; at: number };
        if (seq >= warmup) latencies.push(performance.now() - at);
        if (++received >= total) allIn();
      },
    });
    void pipeline.start();
    const send = (seq: number) =>
      producer.send({
        topic: topics.input,
        messages: [{ partition: seq % 6, value: JSON.stringify({ seq, at: performance.now() }) }],
      });
    // the warm-up inputs wait out the group joins (pipeline and reader) and are not counted
    await Promise.all(Array.from({ length: warmup }, (_, seq) => send(seq)));
    while (received < warmup) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    for (let seq = warmup; seq < total; ) {
      const due = warmup + Math.floor(((performance.now() - started) / 1000) * rate);
      for (; seq < Math.min(due, total); seq++) void send(seq);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    latencies.sort((a, b) => a - b);
    if (latencies.length < rate * seconds) throw new Error(`bench eos latency: ${side} read ${latencies.length}`);
    return { p50_ms: round(percentile(latencies, 50)), p99_ms: round(percentile(latencies, 99)) };
  } finally {
    await reader.disconnect().catch(() => undefined);
    await pipeline.close();
    await producer.disconnect().catch(() => undefined);
    await deleteTopics(kafka, topics);
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** `rate` inputs/s for `seconds` through each pipeline, read back by a read_committed reader. */
export async function measureEosLatency(rate = 1000, seconds = 5): Promise<EosLatencyResult> {
  const kafka = scenarioKafka();
  const alo = await readerLatency(kafka, 'alo', rate, seconds);
  const eos = await readerLatency(kafka, 'eos', rate, seconds);
  const window = await readerLatency(kafka, 'window', rate, seconds);
  return { rate, alo, eos, window };
}

// Run alone: node --import tsx bench/eos-latency.ts [rate] [seconds]
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureEosLatency(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 5));
  console.log(`bench: eos latency ${JSON.stringify(result)}`);
}
