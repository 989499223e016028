import type { Headers, IncomingRecord } from '../port.ts';

type ClientHeaderValue = Buffer | string | (Buffer | string)[] | undefined;

/**
 * The client hands headers over as Buffer, string or arrays of them (a name repeated in the record); the port always
 * sees one Buffer per name: the last value of a repeated name, as Kafka's Java client reads it (`lastHeader`).
 */
export function normalizeHeaders(headers: Record<string, ClientHeaderValue> | undefined): Headers {
  const result: Headers = {};
  if (!headers) return result;
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw.at(-1) : raw;
    if (value === undefined) continue;
    result[name] = typeof value === 'string' ? Buffer.from(value) : value;
  }
  return result;
}

interface ClientMessage {
  offset: string;
  key?: Buffer | null | undefined;
  value: Buffer | null;
  headers?: Record<string, ClientHeaderValue> | undefined;
  timestamp: string;
}

/** The client's batch of one partition as the port's records (used by the consumer adapter and the pipeline). */
export function recordsOf(batch: { topic: string; partition: number; messages: ClientMessage[] }): IncomingRecord[] {
  return batch.messages.map((message) => ({
    topic: batch.topic,
    partition: batch.partition,
    offset: message.offset,
    key: message.key ?? null,
    value: message.value ?? null,
    headers: normalizeHeaders(message.headers),
    timestamp: Number(message.timestamp),
  }));
}
