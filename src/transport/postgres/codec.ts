import { fnv1a } from '../../hash.ts';
import type { Headers } from '../port.ts';

/** Header values are bytes; in the jsonb column they are base64 strings. */
export function encodeHeaders(headers: Record<string, string | Buffer>): string {
  const encoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    encoded[name] = (typeof value === 'string' ? Buffer.from(value) : value).toString('base64');
  }
  return JSON.stringify(encoded);
}

export function decodeHeaders(stored: Record<string, string>): Headers {
  const headers: Headers = {};
  for (const [name, value] of Object.entries(stored)) headers[name] = Buffer.from(value, 'base64');
  return headers;
}

/** Records of one key always land on one partition; records without a key on partition 0. */
export function partitionOf(key: string | null, partitions: number): number {
  return key === null ? 0 : fnv1a(key) % partitions;
}
