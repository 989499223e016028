import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { IncomingRecord, OutgoingRecord } from '../transport/port.ts';
import type { Event } from './event.ts';
import { isUuid } from './uuidv7.ts';

/**
 * CloudEvents 1.0, Kafka protocol binding, binary content mode: attributes travel as `ce_*` headers, the record value
 * is the data, the record key is the partition key. `version` travels as the extension attribute `ce_version`,
 * and the key also as the partitioning extension `ce_partitionkey`.
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
  headers.ce_partitionkey = event.key;
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

function decodeFailed(
  code: typeof ErrorCodes.EFF_DECODE_FAILED | typeof ErrorCodes.EFF_INVALID_EVENT,
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

/** Reads an event back from a record; a record that is not a valid event throws a permanent, coded error. */
export function decodeEvent(record: IncomingRecord): Event {
  const id = header(record, 'ce_id');
  if (id === undefined || !isUuid(id)) {
    throw new EffectivelyError(
      ErrorCodes.EFF_MISSING_EVENT_ID,
      `${record.topic}[${record.partition}]@${record.offset}: ${id === undefined ? 'no ce_id header' : `ce_id \`${id.slice(0, 80)}\` is not a UUID`}`,
      { retryable: false, details: { topic: record.topic, partition: record.partition, offset: record.offset } },
    );
  }
  const type = header(record, 'ce_type');
  const source = header(record, 'ce_source');
  if (!type || !source) throw decodeFailed(ErrorCodes.EFF_INVALID_EVENT, 'missing ce_type or ce_source', record);
  const versionText = header(record, 'ce_version');
  const version = versionText === undefined ? undefined : Number(versionText);
  if (version !== undefined && !Number.isSafeInteger(version)) {
    throw decodeFailed(ErrorCodes.EFF_INVALID_EVENT, `ce_version \`${versionText}\` is not an integer`, record);
  }
  let data: unknown = null;
  if (record.value !== null) {
    try {
      data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(record.value));
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
    id: id.toLowerCase(),
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
