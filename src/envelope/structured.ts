import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { IncomingRecord, OutgoingRecord } from '../transport/port.ts';
import { decodeFailed } from './cloudevents.ts';
import type { Event } from './event.ts';
import { canonicalId, identityProblem } from './identity.ts';
import { parseVersion } from './version.ts';

/**
 * CloudEvents 1.0, Kafka protocol binding, **structured** content mode: the record's `content-type` header is
 * `application/cloudevents+json` and its value is the whole event in the CloudEvents JSON format (attributes and data
 * in one JSON object). The record key is still the partition key.
 *
 * The mapping mirrors the binary mode (`cloudevents.ts`) so that an event decodes to the same `Event` in either mode:
 * - `version` is the extension attribute `version` (a JSON integer), the key also the extension `partitionkey`;
 * - an event header `ce_<name>` (a valid attribute name: lowercase letters and digits, e.g. `ce_subject`,
 *   `ce_dataschema`) is the attribute `<name>`; on decoding, any attribute we do not map ourselves comes back as the
 *   header `ce_<name>`, exactly as the binary mode hands unknown `ce_*` headers through;
 * - other event headers (e.g. `traceparent`) stay Kafka record headers.
 */
export const structuredContentType = 'application/cloudevents+json';

/** How the data is written, as a serde tells it: `datacontenttype`, `dataschema` and the serialized bytes. */
export interface DataEncoding {
  /** The `datacontenttype`, e.g. `application/json` or `application/avro` (default `application/json`). */
  readonly contentType?: string;
  /** The `dataschema` URI (e.g. the schema's subject and version in a registry). */
  readonly dataSchema?: string;
  /** The data already serialized (default: the event's data as JSON). */
  readonly bytes?: Uint8Array;
}

/** Attributes the envelope writes itself; every other attribute travels as a `ce_<name>` event header. */
const mapped = new Set([
  'specversion',
  'id',
  'source',
  'type',
  'time',
  'datacontenttype',
  'data',
  'data_base64',
  'version',
  'partitionkey',
]);
const attributeName = /^[a-z0-9]+$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/** `application/json`, `text/json` and any `+json` suffix: data written as a JSON value rather than base64. */
export function isJsonContentType(contentType: string): boolean {
  const media = mediaType(contentType);
  return media === 'application/json' || media === 'text/json' || media.endsWith('+json');
}

/** True when the record says it is a structured CloudEvent (any `application/cloudevents…` content type). */
export function isStructuredRecord(record: IncomingRecord): boolean {
  const contentType = record.headers['content-type']?.toString('utf8');
  return contentType !== undefined && mediaType(contentType).startsWith('application/cloudevents');
}

function invalidEvent(message: string): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, message);
}

/** Bytes parsed as UTF-8 JSON, or why they are not (e.g. a registry's wire format, with its schema id prefix). */
function parseJson(bytes: Uint8Array): { value: unknown } | { error: Error } {
  try {
    return { value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) };
  } catch (error) {
    return { error: error as Error };
  }
}

/**
 * The `data` or `data_base64` member and the `datacontenttype` of an event about to be written: JSON data as a JSON
 * value; bytes as `data_base64` unless the content type is JSON and they parse as JSON.
 */
function dataMember(event: Event, encoding: DataEncoding | undefined): Record<string, unknown> {
  const binary = event.data instanceof Uint8Array;
  const contentType = encoding?.contentType ?? (binary ? 'application/octet-stream' : 'application/json');
  const json = isJsonContentType(contentType);
  const bytes = encoding?.bytes ?? (binary ? (event.data as Uint8Array) : undefined);
  if (bytes !== undefined) {
    const parsed = json ? parseJson(bytes) : undefined;
    if (parsed && 'value' in parsed) return { datacontenttype: contentType, data: parsed.value };
    return { datacontenttype: contentType, data_base64: Buffer.from(bytes).toString('base64') };
  }
  if (json || typeof event.data === 'string') return { datacontenttype: contentType, data: event.data ?? null };
  throw invalidEvent(`event ${event.id}: data for ${contentType} must be given as bytes (encoding.bytes)`);
}

/** Writes an event in the structured mode. `encoding` (from a serde) sets `datacontenttype`, `dataschema`, the data. */
export function encodeStructured(event: Event, encoding?: DataEncoding): OutgoingRecord {
  const headers: Record<string, string> = {};
  const extensions: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    const attribute = name.startsWith('ce_') ? name.slice(3) : undefined;
    if (attribute !== undefined && attributeName.test(attribute)) {
      if (!mapped.has(attribute)) extensions[attribute] = value;
    } else headers[name] = value;
  }
  if (encoding?.dataSchema !== undefined) extensions.dataschema = encoding.dataSchema;
  const document = {
    specversion: '1.0',
    id: event.id,
    source: event.source,
    type: event.type,
    time: event.time,
    ...extensions,
    partitionkey: event.key,
    ...(event.version === undefined ? {} : { version: event.version }),
    ...dataMember(event, encoding),
  };
  headers['content-type'] = structuredContentType;
  return { topic: event.topic, key: event.key, value: Buffer.from(JSON.stringify(document)), headers };
}

/** One attribute of a structured record, nothing else checked; undefined when the value is not a JSON object. */
export function peekAttribute(record: IncomingRecord, name: string): unknown {
  const parsed = record.value === null ? undefined : parseJson(record.value);
  const document = parsed && 'value' in parsed ? parsed.value : undefined;
  return typeof document === 'object' && document !== null ? (document as Record<string, unknown>)[name] : undefined;
}

function text(document: Record<string, unknown>, name: string): string | undefined {
  const value = document[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Reads a structured-mode record; anything that is not a valid event throws the same coded errors as binary mode. */
export function decodeStructured(record: IncomingRecord): Event {
  const contentType = record.headers['content-type']!.toString('utf8');
  if (mediaType(contentType) !== structuredContentType) {
    throw decodeFailed(ErrorCodes.EFF_DECODE_FAILED, `unsupported structured format \`${contentType}\``, record);
  }
  if (record.value === null)
    throw decodeFailed(ErrorCodes.EFF_DECODE_FAILED, 'structured event without a value', record);
  const parsed = parseJson(record.value);
  if ('error' in parsed) {
    const { error } = parsed;
    throw decodeFailed(ErrorCodes.EFF_DECODE_FAILED, `value is not UTF-8 JSON: ${error.message}`, record, error);
  }
  const document = parsed.value;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw decodeFailed(ErrorCodes.EFF_DECODE_FAILED, 'structured event is not a JSON object', record);
  }
  const doc = document as Record<string, unknown>;
  // Any non-empty text is an id (CloudEvents: unique per source); the dedup key is derived from source + id.
  const id = doc.id;
  if (typeof id !== 'string' || id === '') {
    const problem =
      id === undefined ? 'no `id` attribute' : `id \`${String(id).slice(0, 80)}\` is not a non-empty string`;
    throw decodeFailed(ErrorCodes.EFF_MISSING_EVENT_ID, problem, record);
  }
  const invalid = (message: string) => decodeFailed(ErrorCodes.EFF_INVALID_EVENT, message, record);
  if (doc.specversion !== '1.0') throw invalid(`specversion \`${String(doc.specversion)}\` is not 1.0`);
  const type = text(doc, 'type');
  const source = text(doc, 'source');
  if (!type || !source) throw invalid('missing type or source');
  for (const [name, value] of [
    ['id', id],
    ['source', source],
  ] as const) {
    const problem = identityProblem(value);
    if (problem !== undefined) throw invalid(`${name} ${problem}`);
  }
  const version = parseVersion(doc.version);
  if (version === null) {
    throw invalid(`version \`${String(doc.version)}\` is not an integer`);
  }
  if (doc.time !== undefined && typeof doc.time !== 'string') throw invalid('time is not a string');
  if (doc.data !== undefined && doc.data_base64 !== undefined) throw invalid('both data and data_base64');
  let data: unknown = doc.data ?? null;
  if (doc.data_base64 !== undefined) {
    if (typeof doc.data_base64 !== 'string' || !base64.test(doc.data_base64))
      throw invalid('data_base64 is not base64');
    data = Buffer.from(doc.data_base64, 'base64');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (name !== 'content-type') headers[name] = value.toString('utf8');
  }
  for (const [name, value] of Object.entries(doc)) {
    if (mapped.has(name) || value === null) continue;
    if (typeof value === 'object')
      throw invalid(`attribute \`${name.slice(0, 40)}\` is not a string, number or boolean`);
    headers[`ce_${name}`] = String(value);
  }
  return {
    id: canonicalId(id),
    topic: record.topic,
    type,
    source,
    key: record.key?.toString('utf8') ?? text(doc, 'partitionkey') ?? '',
    ...(version === undefined ? {} : { version }),
    time: (doc.time as string | undefined) ?? new Date(record.timestamp).toISOString(),
    data,
    headers,
  };
}
