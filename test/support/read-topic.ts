import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import type { IncomingRecord, Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from './fixtures.ts';

/** A throwaway group reading `topic` from its start into `records` (raw: no decoding, no dedup) until closed. */
async function rawReader(transport: Transport, topic: string, maxBatchSize: number) {
  const records: IncomingRecord[] = [];
  const consumer = transport.consumer({ group: randomName('raw'), topics: [topic], maxBatchSize, fromBeginning: true });
  await consumer.run(async (batch, control) => {
    records.push(...batch.records);
    control.resolve(batch.records.at(-1)!.offset);
  });
  return { records, close: () => consumer.close() };
}

/** Reads `count` records of `topic` from the beginning with a throwaway group (raw: no decoding, no dedup). */
export async function readTopic(transport: Transport, topic: string, count: number): Promise<IncomingRecord[]> {
  const { records, close } = await rawReader(transport, topic, 100);
  try {
    await eventually(async () => records.length >= count, 30_000, `${count} records on ${topic}`);
  } finally {
    await close();
  }
  return records;
}

/** Every record of `topic` up to its end offsets now. */
export async function readToEnd(transport: Transport, topic: string): Promise<IncomingRecord[]> {
  const admin = transport.admin();
  const ends = await admin.endOffsets(topic).finally(() => admin.close());
  const total = ends.reduce((sum, end) => sum + Number(end.offset), 0);
  return total === 0 ? [] : readTopic(transport, topic, total);
}

/** The `data.n` of each record of `key` on `topic`, in topic order (every record to the topic's end offsets). */
export async function keyOrder(transport: Transport, topic: string, key: string): Promise<number[]> {
  const order: number[] = [];
  for (const record of await readToEnd(transport, topic)) {
    const decoded = decodeEvent(record);
    if (decoded.key === key) order.push((decoded.data as { n: number }).n);
  }
  return order;
}

/**
 * Reads `topic` from its start until a record with key `marker` arrived (the relay went past everything before), then
 * each partition to its end; returns the records but the markers.
 */
export async function readUntilMarker(transport: Transport, topic: string): Promise<IncomingRecord[]> {
  const { records, close } = await rawReader(transport, topic, 500);
  try {
    await eventually(async () => records.some((r) => String(r.key) === 'marker'), 30_000, `the marker on ${topic}`);
    // The marker may come before other partitions' earlier records: read each partition to its end.
    const admin = transport.admin();
    const ends = await admin.endOffsets(topic).finally(() => admin.close());
    const total = ends.reduce((sum, end) => sum + Number(end.offset), 0);
    await eventually(async () => records.length >= total, 30_000, `${total} records on ${topic}`);
  } finally {
    await close();
  }
  return records.filter((r) => String(r.key) !== 'marker');
}
