// Where a raw read's main-thread time goes: the client's lower-level `consume()` against the project's transport, on
// the same binary-mode and structured-mode events, each read under the CPU profiler in one process, interleaved.
// Prints µs per record by bucket (native conversion, GC, the client's KafkaJS layer, ours) and writes each profile to
// the folder given. node --import tsx bench/read-profile.ts [events, default 100000] [rounds, default 1] [folder]
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import { consumeLowLevel } from './client-consume.ts';
import { consumeRaw } from './consume.ts';
import { preload, type Run } from './support.ts';

const events = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 1);
const folder = process.argv[4];
const id = Date.now().toString(36);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Which part of the read a function belongs to, by where it is defined. */
function bucketOf(frame: ProfileNode['callFrame']): string {
  const { functionName: name, url } = frame;
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'native (program)';
  if (name === '(garbage collector)') return 'gc';
  if (url.includes('/src/transport/') || url.includes('/bench/')) return `ours: ${name || '(anonymous)'}`;
  if (url.includes('kafka-javascript/lib/kafkajs/')) return `client kafkajs: ${name || '(anonymous)'}`;
  if (url.includes('kafka-javascript/lib/')) return `client lib: ${name || '(anonymous)'}`;
  return `other: ${name || '(anonymous)'}`;
}

/** Self time per bucket in ms (from the profile's samples). */
function selfTimes(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const times = new Map<string, number>();
  for (let n = 0; n < profile.samples.length; n++) {
    const bucket = bucketOf(byId.get(profile.samples[n]!)!.callFrame);
    times.set(bucket, (times.get(bucket) ?? 0) + (profile.timeDeltas[n] ?? 0) / 1000);
  }
  return times;
}

function summary(label: string, run: Run, profile: Profile): void {
  const times = selfTimes(profile);
  const busy = [...times].filter(([bucket]) => bucket !== 'idle').reduce((sum, [, ms]) => sum + ms, 0);
  const us = (ms: number) => ((ms * 1000) / run.events).toFixed(2);
  console.log(
    `${label}: ${run.eps} events/s, main thread busy ${us(busy)} µs/record, idle ${us(times.get('idle') ?? 0)}`,
  );
  const top = [...times].filter(([bucket]) => bucket !== 'idle').sort((a, b) => b[1] - a[1]);
  for (const [bucket, ms] of top.slice(0, 14)) console.log(`  ${us(ms).padStart(7)} µs  ${bucket}`);
}

const transport = kafkaTransport({ clientId: 'bench-read-profile' });
const admin = transport.admin();
const topics = { binary: `bench-profile-binary-${id}`, structured: `bench-profile-structured-${id}` };
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
try {
  const producer = transport.producer();
  for (const [mode, topic] of Object.entries(topics)) {
    await admin.createTopics([{ topic, partitions: 6 }]);
    await preload(producer, topic, events, mode as 'binary' | 'structured');
  }
  await producer.close();
  const readers: Record<string, (topic: string, group: string) => Promise<Run>> = {
    'client consume()': (topic, group) => consumeLowLevel(topic, events, group),
    transport: (topic, group) => consumeRaw(transport, topic, events, group),
  };
  for (let round = 0; round < rounds; round++) {
    for (const [mode, topic] of Object.entries(topics)) {
      for (const [r, [reader, read]] of Object.entries(readers).entries()) {
        await session.post('Profiler.start');
        const run = await read(topic, `bench-profile-${round}-${r}-${mode}-${id}`);
        const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
        const label = `round ${round + 1} ${reader}, ${mode}`;
        summary(label, run, profile);
        if (folder) writeFileSync(join(folder, `${label.replace(/[^\w]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
      }
    }
  }
} finally {
  session.disconnect();
  await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
  await admin.close();
}
process.exit(0);
