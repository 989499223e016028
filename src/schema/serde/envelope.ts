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
import { decodeEvent, encodeEvent } from '../../envelope/cloudevents.ts';
import type { Event } from '../../envelope/event.ts';
import { EffectivelyError } from '../../errors.ts';
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

/**
 * A `decodeEvent` that reads data of `serde`'s content type with `serde`; records of any other content type (JSON
 * events written before the serde was introduced) are decoded by `decodeEvent` as before.
 */
export function decodeEventWith<T = unknown>(serde: Serde<T>): (record: IncomingRecord) => Promise<Event<T>> {
  return async (record) => {
    if (record.headers['content-type']?.toString('utf8') !== serde.contentType) return decodeEvent(record) as Event<T>;
    const event = decodeEvent({ ...record, value: null });
    let data: T;
    try {
      data = await serde.deserialize(record.topic, record.value ?? Buffer.alloc(0));
    } catch (error) {
      const failure = error as EffectivelyError;
      const where = { topic: record.topic, partition: record.partition, offset: record.offset };
      throw new EffectivelyError(
        failure.code,
        `${record.topic}[${record.partition}]@${record.offset}: ${failure.message}`,
        {
          retryable: failure.retryable,
          cause: error,
          details: { ...failure.details, ...where, eventId: event.id },
        },
      );
    }
    const { ce_dataschema: _dataSchema, ...headers } = event.headers ?? {};
    return { ...event, data, headers };
  };
}
