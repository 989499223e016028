import type { Headers, IncomingRecord } from '../port.ts';

/** A record batch of a fetch response as the client parses it (only what is read here). */
export interface FetchedBatch {
  firstOffset: bigint;
  lastOffsetDelta: number;
  firstTimestamp: bigint;
  attributes: number;
  records: {
    offsetDelta: number;
    timestampDelta: bigint;
    key: Buffer | null;
    value: Buffer | null;
    headers: [Buffer | null, Buffer | null][];
  }[];
}

/** Control batches (transaction markers) carry no records for the application. */
const IS_CONTROL = 0b100000;

/**
 * One partition's fetched batches as the port's records, from `from` on (a batch may start before the offset asked
 * for), and the next offset to fetch: past every batch, control markers and aborted transactions included (the client
 * drops the aborted ones before this sees them), so a partition never stalls on them.
 *
 * The client hands each header as a slice of the response (no copy); the port wants `name -> Buffer` with the last
 * value of a repeated name (as `kafkaTransport`), so the names are decoded here and nothing else is made per header.
 */
export function recordsFrom(
  topic: string,
  partition: number,
  batches: FetchedBatch[],
  from: bigint,
): { records: IncomingRecord[]; next: bigint } {
  const records: IncomingRecord[] = [];
  let next = from;
  for (const batch of batches) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
    if (end > next) next = end;
    if (batch.attributes & IS_CONTROL) continue;
    for (const record of batch.records) {
      const offset = batch.firstOffset + BigInt(record.offsetDelta);
      if (offset < from) continue;
      records.push({
        topic,
        partition,
        offset: offset.toString(),
        key: record.key ?? null,
        value: record.value ?? null,
        headers: headersOf(record.headers),
        timestamp: Number(batch.firstTimestamp + record.timestampDelta),
      });
    }
  }
  return { records, next };
}

function headersOf(list: [Buffer | null, Buffer | null][]): Headers {
  const headers: Headers = {};
  for (let n = 0; n < list.length; n++) {
    const [name, value] = list[n]!;
    if (name === null) continue;
    const text = name.toString();
    const bytes = value ?? Buffer.alloc(0);
    // A header named `__proto__` is a header like any other (an assignment would set the prototype instead)
    if (text === '__proto__') Object.defineProperty(headers, text, { value: bytes, enumerable: true, writable: true });
    else headers[text] = bytes;
  }
  return headers;
}
