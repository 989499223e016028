// What CloudEvents headers cost on read: the same events in several header shapes, each read raw by the project's
// transport and by the client's lower-level consumer, interleaved in one run (the machine is shared: only ratios
// within a run count). node --import tsx bench/headers.ts [events, default 100000] [rounds, default 2]
import { encodeEventAs } from '../src/envelope/cloudevents.ts';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import type { OutgoingRecord } from '../src/transport/port.ts';
import { consumeLowLevel, consumeLowLevelRecords } from './client-consume.ts';
import { consumeRaw } from './consume.ts';
import { benchEvent } from './support.ts';

const events = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 2);
const id = Date.now().toString(36);

/** Each shape from the library's binary record; `structured` is the structured mode (one header). */
const shapes: Record<string, (binary: OutgoingRecord, structured: OutgoingRecord) => OutgoingRecord> = {
  // the binary mode before issue 36: the key also as the partitioning extension
  'binary 7 (with ce_partitionkey)': (binary) => ({
    ...binary,
    headers: { ...binary.headers, ce_partitionkey: String(binary.key) },
  }),
  'binary 6 (the library)': (binary) => binary,
  // what CloudEvents 1.0 requires, without time and datacontenttype
  'binary 4 (id, source, specversion, type)': (binary) => {
    const { ce_id, ce_source, ce_specversion, ce_type } = binary.headers ?? {};
    return {
      ...binary,
      headers: { ce_id: ce_id!, ce_source: ce_source!, ce_specversion: ce_specversion!, ce_type: ce_type! },
    };
  },
  structured: (_binary, structured) => structured,
};

const transport = kafkaTransport({ clientId: 'bench-headers' });
const admin = transport.admin();
const topics = Object.fromEntries(Object.keys(shapes).map((shape, n) => [shape, `bench-headers-${n}-${id}`]));
const readers: Record<string, (topic: string, group: string) => Promise<number>> = {
  transport: async (topic, group) => (await consumeRaw(transport, topic, events, group)).eps,
  'client consume()': async (topic, group) => (await consumeLowLevel(topic, events, group)).eps,
  // what a transport on the lower-level API would start from: the same read, the port's records made in one step
  'client consume() + records': async (topic, group) => (await consumeLowLevelRecords(topic, events, group)).eps,
};
try {
  const producer = transport.producer();
  for (const [shape, topic] of Object.entries(topics)) {
    await admin.createTopics([{ topic, partitions: 6 }]);
    for (let from = 0; from < events; from += 5000) {
      const records: OutgoingRecord[] = [];
      for (let n = from; n < Math.min(from + 5000, events); n++) {
        const event = benchEvent(topic, n);
        records.push(shapes[shape]!(encodeEventAs(event, 'binary'), encodeEventAs(event, 'structured')));
      }
      await producer.send(records);
    }
  }
  await producer.close();
  const table: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [r, [reader, read]] of Object.entries(readers).entries()) {
      for (const [s, [shape, topic]] of Object.entries(topics).entries()) {
        const eps = await read(topic, `bench-headers-${round}-${r}-${s}-${id}`);
        console.log(`headers: round ${round + 1} ${reader}, ${shape}: ${eps} events/s`);
        const row = `${reader}, ${shape}`;
        table[row] = [...(table[row] ?? []), eps];
      }
    }
  }
  for (const [row, runs] of Object.entries(table)) console.log(`headers: ${row}: ${runs.join(' / ')} events/s`);
} finally {
  await admin.deleteTopics(Object.values(topics)).catch(() => undefined);
  await admin.close();
}
process.exit(0);
