/**
 * Events with registry-serialized data: the same CloudEvents binary mode as `encodeEvent` / `decodeEvent`
 * (`ce_*` headers, key), with the value in the registry's wire format, `datacontenttype` (the `content-type` header)
 * `application/avro` or `application/schema+json`, and `dataschema` (`ce_dataschema`) `registry:schemas/ids/<id>`:
 * the registry API's path of the writer's schema.
 *
 * Hook them where records are made and read: the relay publishes `await encodeEventWith(serde)(event)` instead of
 * `encodeEvent(event)`, the consumer decodes with `await decodeEventWith(serde)(record)` instead of
 * `decodeEvent(record)`. Their errors are the same permanent, coded kind (a dead letter, never a crash), except
 * `EFF_SCHEMA_REGISTRY_UNAVAILABLE` (retryable).
 */
import { dataContentTypeOf, decodeEvent, encodeEvent } from '../../envelope/cloudevents.ts';
import type { Event } from '../../envelope/event.ts';
import { isStructuredRecord } from '../../envelope/structured.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { IncomingRecord, OutgoingRecord } from '../../transport/port.ts';
import type { Serde } from './serde.ts';
import { decodeWire } from './wire.ts';

/** The `dataschema` of data written with schema `id`. */
export const dataSchemaOf = (id: number): string => `registry:schemas/ids/${id}`;

/** How an event's data is written by a serde: its content type, `dataschema` and bytes (wire format). */
export interface SerdeEncoding {
  readonly contentType: string;
  readonly dataSchema: string;
  readonly bytes: Buffer;
}

/** Serializes an event's data with `serde` (registering its schema on first use, unless told otherwise). */
export async function encodingOf(serde: Serde, event: Event): Promise<SerdeEncoding> {
  const bytes = await serde.serialize(event.topic, event.data);
  return { contentType: serde.contentType, dataSchema: dataSchemaOf(decodeWire(bytes).id), bytes };
}

/** An `encodeEvent` whose data goes through `serde`. */
export function encodeEventWith(serde: Serde): (event: Event) => Promise<OutgoingRecord> {
  return async (event) => {
    const record = encodeEvent(event);
    const encoding = await encodingOf(serde, event);
    return {
      ...record,
      value: encoding.bytes,
      headers: { ...record.headers, 'content-type': encoding.contentType, ce_dataschema: encoding.dataSchema },
    };
  };
}

/** A media type without its parameters, lowercased (`Application/Avro; x=1` is `application/avro`). */
const mediaType = (contentType: string | undefined): string | undefined =>
  contentType?.split(';')[0]!.trim().toLowerCase();

/** A permanent error naming the record, its code and retryability kept (the serde's own, or one of ours). */
function onRecord(record: IncomingRecord, eventId: string, failure: EffectivelyError): EffectivelyError {
  const where = { topic: record.topic, partition: record.partition, offset: record.offset };
  return new EffectivelyError(
    failure.code,
    `${record.topic}[${record.partition}]@${record.offset}: ${failure.message}`,
    {
      retryable: failure.retryable,
      cause: failure,
      details: { ...failure.details, ...where, eventId },
    },
  );
}

/** The wire-format bytes of a decoded event's data: the binary mode's value, the structured mode's `data_base64`. */
function wireBytes(record: IncomingRecord, event: Event, contentType: string): Uint8Array {
  if (!isStructuredRecord(record)) return record.value ?? Buffer.alloc(0);
  if (event.data instanceof Uint8Array) return event.data;
  throw new EffectivelyError(
    ErrorCodes.EFF_SCHEMA_DECODE_FAILED,
    `structured event of datacontenttype ${contentType} carries its data as a JSON value, not as the registry's wire ` +
      'format in data_base64',
  );
}

/**
 * A `decodeEvent` that reads data of `serde`'s content type with `serde`, in either content mode (the data content type
 * is the binary mode's `content-type` header, the structured mode's `datacontenttype` attribute, and the data its
 * value or `data_base64`). Records of a JSON content type (events written before the serde was introduced) are decoded
 * by `decodeEvent` as before; data of any other content type (bytes in another serde's format, `data_base64` the
 * serde does not read) is refused with `EFF_SCHEMA_DECODE_FAILED`: a dead letter, never a handler call.
 */
export function decodeEventWith<T = unknown>(serde: Serde<T>): (record: IncomingRecord) => Promise<Event<T>> {
  const own = mediaType(serde.contentType);
  return async (record) => {
    const contentType = mediaType(dataContentTypeOf(record)) ?? 'application/json';
    if (contentType !== own) {
      const event = decodeEvent(record);
      if (!(event.data instanceof Uint8Array)) return event as Event<T>;
      throw onRecord(
        record,
        event.id,
        new EffectivelyError(
          ErrorCodes.EFF_SCHEMA_DECODE_FAILED,
          `data of content type ${contentType} is bytes this serde (${serde.contentType}) does not read`,
        ),
      );
    }
    const event = isStructuredRecord(record) ? decodeEvent(record) : decodeEvent({ ...record, value: null });
    let data: T;
    try {
      data = await serde.deserialize(record.topic, wireBytes(record, event, contentType));
    } catch (error) {
      throw onRecord(record, event.id, error as EffectivelyError);
    }
    const { ce_dataschema: _dataSchema, ...headers } = event.headers ?? {};
    return { ...event, data, headers };
  };
}
