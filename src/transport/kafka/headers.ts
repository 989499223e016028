import type { Headers } from '../port.ts';

type ClientHeaderValue = Buffer | string | (Buffer | string)[] | undefined;

/** The client hands headers over as Buffer, string or arrays of them; the port always sees one Buffer per name. */
export function normalizeHeaders(headers: Record<string, ClientHeaderValue> | undefined): Headers {
  const result: Headers = {};
  if (!headers) return result;
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) continue;
    result[name] = typeof value === 'string' ? Buffer.from(value) : value;
  }
  return result;
}
