import type { Headers, IncomingRecord } from '../port.ts';

type ClientHeaderValue = Buffer | string | (Buffer | string)[] | undefined;
type ClientHeaders = Record<string, ClientHeaderValue>;

/**
 * The client hands headers over as Buffer, string or arrays of them (a name repeated in the record); the port always
 * sees one Buffer per name: the last value of a repeated name, as Kafka's Java client reads it (`lastHeader`).
 *
 * This runs for every record read (the binary content mode carries six headers each), so it allocates as little as it
 * can: the client builds a fresh headers object per record and nothing else holds it, so when every value already is
 * one Buffer (the common case) that object is the result, and no `Object.entries` pairs are made
 * (docs/kafka.md "Reading CloudEvents headers").
 */
export function normalizeHeaders(headers: ClientHeaders | undefined): Headers {
  if (!headers) return {};
  const names = Object.keys(headers);
  // A header named `__proto__` set the client's object's prototype: such an object is not handed on
  if (Object.getPrototypeOf(headers) !== Object.prototype) return rebuilt(headers, names);
  for (let n = 0; n < names.length; n++) {
    if (!Buffer.isBuffer(headers[names[n]!])) return rebuilt(headers, names);
  }
  return headers as Headers;
}

/** A new object with one Buffer per name (the last of an array, a string as its UTF-8 bytes, undefined dropped). */
function rebuilt(headers: ClientHeaders, names: string[]): Headers {
  const result: Headers = {};
  for (let n = 0; n < names.length; n++) {
    const name = names[n]!;
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    result[name] = typeof value === 'string' ? Buffer.from(value) : value;
  }
  return result;
}

interface ClientMessage {
  offset: string;
  key?: Buffer | null | undefined;
  value: Buffer | null;
  headers?: ClientHeaders | undefined;
  timestamp: string;
}

/** The client's batch of one partition as the port's records (used by the consumer adapter and the pipeline). */
export function recordsOf(batch: { topic: string; partition: number; messages: ClientMessage[] }): IncomingRecord[] {
  const { topic, partition, messages } = batch;
  const records = new Array<IncomingRecord>(messages.length);
  for (let n = 0; n < messages.length; n++) {
    const message = messages[n]!;
    records[n] = {
      topic,
      partition,
      offset: message.offset,
      key: message.key ?? null,
      value: message.value ?? null,
      headers: normalizeHeaders(message.headers),
      timestamp: Number(message.timestamp),
    };
  }
  return records;
}
