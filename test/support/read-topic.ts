import type { IncomingRecord, Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from './fixtures.ts';

/** Reads `count` records of `topic` from the beginning with a throwaway group (raw: no decoding, no dedup). */
export async function readTopic(transport: Transport, topic: string, count: number): Promise<IncomingRecord[]> {
  const records: IncomingRecord[] = [];
  const consumer = transport.consumer({
    group: randomName('raw'),
    topics: [topic],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  await consumer.run(async (batch, control) => {
    records.push(...batch.records);
    control.resolve(batch.records.at(-1)!.offset);
  });
  try {
    await eventually(async () => records.length >= count, 30_000, `${count} records on ${topic}`);
  } finally {
    await consumer.close();
  }
  return records;
}
