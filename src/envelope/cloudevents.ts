import { EffectivelyError, ErrorCodes, invalidOptions } from '../errors.ts';
import type { IncomingRecord, OutgoingRecord } from '../transport/port.ts';
import type { Event } from './event.ts';
import { canonicalId, dedupKey, identityProblem, isSelfKeyedUuid } from './identity.ts';
import {
  type DataEncoding,
  decodeStructured,
  encodeStructured,
  isStructuredRecord,
  peekAttribute,
} from './structured.ts';
import { parseVersion } from './version.ts';

/**
 * CloudEvents 1.0, Kafka protocol binding, binary content mode: attributes travel as `ce_*` headers, the record value
 * is the data, the record key is the partition key. `version` travels as the extension attribute `ce_version`. The
 * structured mode is in `structured.ts`; `decodeEvent` reads both, `encodeEventAs` writes either.
 *
 * Headers written: only what an event of ours carries and the key does not already say: `ce_specversion`, `ce_id`,
 * `ce_type`, `ce_source` (required), `ce_time`, `content-type` (the datacontenttype), `ce_version` when set. Each
 * header costs the Kafka client a native conversion per record on read (docs/kafka.md, "Reading CloudEvents headers"):
 * the partitioning extension `ce_partitionkey`, a copy of the record key, is no longer written (one conversion less per
 * record, about 8 % of the read). It is still read: a record of another producer without a key takes its key from it.
 */
const contentType = 'application/json';
const reserved = new Set([
  'ce_specversion',
  'ce_id',
  'ce_type',
  'ce_source',
  'ce_time',
  'ce_version',
  'ce_partitionkey',
  'content-type',
]);

export function encodeEvent(event: Event): OutgoingRecord {
  const headers: Record<string, string> = { ...event.headers };
  headers.ce_specversion = '1.0';
  headers.ce_id = event.id;
  headers.ce_type = event.type;
  headers.ce_source = event.source;
  headers.ce_time = event.time;
  headers['content-type'] = contentType;
  if (event.version !== undefined) headers.ce_version = String(event.version);
  return {
    topic: event.topic,
    key: event.key,
    value: Buffer.from(JSON.stringify(event.data ?? null)),
    headers,
  };
}

function header(record: IncomingRecord, name: string): string | undefined {
  return record.headers[name]?.toString('utf8');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An identity header (`ce_id`, `ce_source`) read strictly: undefined when absent, null when its bytes are not UTF-8
 * (a lenient read would turn every invalid byte into U+FFFD, and two different ids into one dedup key).
 */
function identityHeader(record: IncomingRecord, name: string): string | null | undefined {
  const value = record.headers[name];
  if (value === undefined) return undefined;
  try {
    return strictUtf8.decode(value);
  } catch {
    return null;
  }
}

/** A permanent decode error naming the record (shared with the structured mode). */
export function decodeFailed(
  code:
    | typeof ErrorCodes.EFF_DECODE_FAILED
    | typeof ErrorCodes.EFF_INVALID_EVENT
    | typeof ErrorCodes.EFF_MISSING_EVENT_ID,
  message: string,
  record: IncomingRecord,
  cause?: unknown,
): EffectivelyError {
  return new EffectivelyError(code, `${record.topic}[${record.partition}]@${record.offset}: ${message}`, {
    retryable: false,
    cause,
    details: { topic: record.topic, partition: record.partition, offset: record.offset },
  });
}

/**
 * Reads an event back from a record in either content mode, told apart by the record's `content-type` header
 * (`application/cloudevents…`: structured, see `structured.ts`; anything else: binary). A record that is not a valid
 * event throws a permanent, coded error.
 */
export function decodeEvent(record: IncomingRecord): Event {
  if (isStructuredRecord(record)) return decodeStructured(record);
  // Any non-empty text is an id (CloudEvents: unique per source); the dedup key is derived from source + id.
  const id = identityHeader(record, 'ce_id');
  if (id === undefined || id === '') {
    const problem = id === undefined ? 'no ce_id header' : 'ce_id is empty';
    throw decodeFailed(ErrorCodes.EFF_MISSING_EVENT_ID, problem, record);
  }
  const type = header(record, 'ce_type');
  const source = identityHeader(record, 'ce_source');
  if (id === null || source === null) {
    throw decodeFailed(
      ErrorCodes.EFF_INVALID_EVENT,
      `${id === null ? 'ce_id' : 'ce_source'} is not UTF-8 text`,
      record,
    );
  }
  if (!type || !source) throw decodeFailed(ErrorCodes.EFF_INVALID_EVENT, 'missing ce_type or ce_source', record);
  const versionText = header(record, 'ce_version');
  const version = parseVersion(versionText);
  if (version === null) {
    throw decodeFailed(ErrorCodes.EFF_INVALID_EVENT, `ce_version \`${versionText}\` is not an integer`, record);
  }
  let data: unknown = null;
  if (record.value !== null) {
    try {
      data = JSON.parse(strictUtf8.decode(record.value));
    } catch (error) {
      throw decodeFailed(
        ErrorCodes.EFF_DECODE_FAILED,
        `value is not UTF-8 JSON: ${(error as Error).message}`,
        record,
        error,
      );
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (!reserved.has(name)) headers[name] = value.toString('utf8');
  }
  return {
    id: canonicalId(id),
    topic: record.topic,
    type,
    source,
    key: record.key?.toString('utf8') ?? header(record, 'ce_partitionkey') ?? '',
    ...(version === undefined ? {} : { version }),
    time: header(record, 'ce_time') ?? new Date(record.timestamp).toISOString(),
    data,
    headers,
  };
}

/** CloudEvents content mode of a topic: `ce_*` headers plus the data as value, or the whole event as JSON. */
export type ContentMode = 'binary' | 'structured';

/** The content mode per topic: a map (topics not in it: binary) or a function. */
export type ContentModes = Readonly<Record<string, ContentMode>> | ((topic: string) => ContentMode);

/** The mode `modes` chooses for `topic` (binary when none is given). */
export function modeFor(modes: ContentModes | undefined, topic: string): ContentMode {
  const mode = (typeof modes === 'function' ? modes(topic) : modes?.[topic]) ?? 'binary';
  if (mode !== 'binary' && mode !== 'structured')
    throw invalidOptions('modes', `\`${mode}\` for ${topic}: binary or structured`);
  return mode;
}

/**
 * Writes an event in the given content mode. `encoding` (from a serde) sets `datacontenttype` (binary: the
 * `content-type` header), `dataschema` (binary: `ce_dataschema`) and the serialized data; without it the binary mode
 * is exactly `encodeEvent`.
 */
export function encodeEventAs(event: Event, mode: ContentMode, encoding?: DataEncoding): OutgoingRecord {
  if (mode === 'structured') return encodeStructured(event, encoding);
  const record = encodeEvent(event);
  if (encoding === undefined) return record;
  const headers: OutgoingRecord['headers'] = { ...record.headers, 'content-type': encoding.contentType ?? contentType };
  if (encoding.dataSchema !== undefined) headers.ce_dataschema = encoding.dataSchema;
  return { ...record, headers, value: encoding.bytes === undefined ? record.value : Buffer.from(encoding.bytes) };
}

/** An identity attribute (`id`, `source`) of a record in either mode, without decoding the rest; null when not valid. */
function identityAttribute(record: IncomingRecord, name: 'id' | 'source'): string | null {
  const value = isStructuredRecord(record) ? peekAttribute(record, name) : identityHeader(record, `ce_${name}`);
  return typeof value === 'string' && identityProblem(value) === undefined ? value : null;
}

/**
 * The event id of a record in either mode, as the event carries it (a UUID lowercased, any other id unchanged),
 * without decoding the rest; null when it has no valid one.
 */
export function eventIdOfRecord(record: IncomingRecord): string | null {
  const id = identityAttribute(record, 'id');
  return id === null ? null : canonicalId(id);
}

/**
 * The dedup key of a record in either mode (see `identity.ts`: a v4/v7 UUID id itself, otherwise a UUIDv5 over source + id),
 * without decoding the rest; null when it has no valid id (or a non-UUID id without a valid source). The key a dead
 * letter and a key hold store, equal to `dedupKeyOf(decodeEvent(record))` for a record that decodes.
 */
export function eventKeyOfRecord(record: IncomingRecord): string | null {
  const id = identityAttribute(record, 'id');
  if (id === null) return null;
  // A v4 or v7 UUID is its own key whatever the source (see identity.ts); only other ids need the source.
  const source = isSelfKeyedUuid(id) ? '' : identityAttribute(record, 'source');
  return source === null ? null : dedupKey(source, id);
}

/** The `source` of a record in either mode, without decoding the rest; null when it has no valid one. */
export function eventSourceOfRecord(record: IncomingRecord): string | null {
  return identityAttribute(record, 'source');
}

/**
 * The data's content type (`datacontenttype`) of a record in either mode: binary, the `content-type` header;
 * structured, the attribute (`application/json` when absent, as the JSON format says). For a serde to tell its records.
 */
export function dataContentTypeOf(record: IncomingRecord): string | undefined {
  if (!isStructuredRecord(record)) return header(record, 'content-type');
  const value = peekAttribute(record, 'datacontenttype');
  return typeof value === 'string' ? value : 'application/json';
}
