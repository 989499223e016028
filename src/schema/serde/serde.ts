/**
 * What the Avro, JSON Schema and Protobuf serdes share: the subject strategy, registering (or finding) the serde's own schema,
 * the wire format, and one reader per writer schema id, built once and kept.
 */
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import type { SchemaFormat, SchemaInput, SchemaReference, SchemaRegistry } from '../registry/port.ts';
import { idCache } from './id-cache.ts';
import { type SubjectStrategy, subjectNameFunction } from './subject.ts';
import { decodeWire, encodeWire } from './wire.ts';

export interface SerdeOptions {
  /** Where schemas are registered and looked up by id. Required. */
  registry: SchemaRegistry;
  /**
   * This process's schema (JSON text or parsed JSON): the writer's on `serialize`, the reader's on `deserialize`
   * (records written with another registered version are resolved to it). Required.
   */
  schema: SchemaInput;
  /** Which subject a topic's values go under (default `topic`: `<topic>-value`). See `SubjectStrategy`. */
  subject?: SubjectStrategy;
  /**
   * Register the schema under the subject on the first `serialize` of a topic (default true). With false it must
   * already be registered there (`EFF_SCHEMA_NOT_FOUND` otherwise): registration is then a deploy step.
   */
  autoRegister?: boolean;
  /**
   * Writer schema ids remembered at once, readers and refusals together, least recently used out first (default
   * 1000): records carrying random ids cannot grow the memory.
   */
  maxCachedIds?: number;
  /**
   * How long an id the registry refused (`EFF_SCHEMA_UNKNOWN_ID`, or a 401/403 of a proxy) stays refused without
   * asking again (default 60,000 ms): a registry replica that lagged, or a proxy's passing refusal, heals by itself.
   */
  refusedIdTtlMs?: number;
  /** The clock of `refusedIdTtlMs`, in ms (default `performance.now()`). Inject one to test in virtual time. */
  now?: () => number;
}

/** Serializes a topic's values to the wire format and back. */
export interface Serde<T = unknown> {
  readonly format: SchemaFormat;
  /** The `datacontenttype` of what it writes: `application/avro`, `application/schema+json`, `application/protobuf`. */
  readonly contentType: string;
  /** The subject of `topic`'s values. */
  subjectFor(topic: string): string;
  /**
   * Registers this serde's schema under `topic`'s subject (with `autoRegister: false`, checks it is there) and keeps
   * its id, so that `serialize` asks the registry nothing more for that topic. Call it at start-up on PGlite: inside
   * `outbox.enqueue`'s transaction the embedded registry cannot reach the only session (`EFF_NESTED_TRANSACTION`).
   */
  register(topic: string): Promise<number>;
  /** The wire-format bytes of `data` (registering the schema first when `autoRegister`). */
  serialize(topic: string, data: T): Promise<Buffer>;
  /**
   * The value of wire-format bytes, read with this serde's schema. Permanent errors: `EFF_SCHEMA_DECODE_FAILED`,
   * `EFF_SCHEMA_UNKNOWN_ID`, `EFF_SCHEMA_INCOMPATIBLE`; `EFF_SCHEMA_REGISTRY_UNAVAILABLE` is retryable.
   */
  deserialize(topic: string, value: Uint8Array): Promise<T>;
}

/** The format-specific half of a serde. */
export interface Codec {
  readonly format: SchemaFormat;
  readonly contentType: string;
  /** The schema's name for the record strategies (Avro full name, JSON Schema `title`, Protobuf message full name). */
  readonly recordName: string | undefined;
  /** The payload of `data` written with the serde's schema; `EFF_SCHEMA_ENCODE_FAILED` when it does not fit. */
  encode(data: unknown): Buffer;
  /**
   * A reader of payloads written with `writer` (the registered schema's text) into the serde's schema. Throws
   * `EFF_SCHEMA_INCOMPATIBLE` when the two cannot be resolved; the reader throws EffectivelyErrors as well.
   */
  reader(writer: string): (payload: Buffer) => unknown;
  /**
   * The references the serde's schema is registered with (Protobuf imports), registering (or, without
   * `autoRegister`, finding) each imported schema first. Absent: no references.
   */
  references?(registry: SchemaRegistry, autoRegister: boolean): Promise<SchemaReference[]>;
}

/** Adds the record's coordinates to a permanent error (or wraps a foreign one as a decode failure). */
function onRecord(error: unknown, details: Record<string, unknown>): EffectivelyError {
  if (error instanceof EffectivelyError) {
    Object.assign(error.details, details);
    return error;
  }
  return new EffectivelyError(ErrorCodes.EFF_SCHEMA_DECODE_FAILED, (error as Error)?.message ?? String(error), {
    cause: error,
    details,
  });
}

export function createSerde<T>(codec: Codec, options: SerdeOptions): Serde<T> {
  const { registry } = options;
  const subjectOf = subjectNameFunction(options.subject);
  const ids = new Map<string, Promise<number>>();
  const maxCachedIds = options.maxCachedIds ?? 1000;
  const refusedIdTtlMs = options.refusedIdTtlMs ?? 60_000;
  if (!(Number.isSafeInteger(maxCachedIds) && maxCachedIds > 0))
    throw invalidOptions('maxCachedIds', 'a positive integer');
  if (!(refusedIdTtlMs >= 0 && Number.isFinite(refusedIdTtlMs)))
    throw invalidOptions('refusedIdTtlMs', 'a number of milliseconds, 0 or more');
  const readers = idCache<(payload: Buffer) => unknown>({
    maxEntries: maxCachedIds,
    refusedTtlMs: refusedIdTtlMs,
    now: options.now ?? (() => performance.now()),
  });

  const autoRegister = options.autoRegister !== false;
  const idFor = (subject: string): Promise<number> => {
    let id = ids.get(subject);
    if (id === undefined) {
      const refs = codec.references ? codec.references(registry, autoRegister) : Promise.resolve(undefined);
      id = refs.then((references) =>
        !autoRegister
          ? registry.lookup(subject, options.schema, codec.format, references).then((found) => {
              if (!found) {
                throw new EffectivelyError(
                  ErrorCodes.EFF_SCHEMA_NOT_FOUND,
                  `subject \`${subject}\` does not have this serde's schema, and autoRegister is off`,
                  { details: { subject } },
                );
              }
              return found.id;
            })
          : registry.register(subject, options.schema, codec.format, references),
      );
      ids.set(subject, id);
      id.catch(() => ids.delete(subject));
    }
    return id;
  };

  const readerFor = (id: number): Promise<(payload: Buffer) => unknown> =>
    readers.get(id, async () => {
      const writer = await registry.getById(id);
      if (writer.format !== codec.format) {
        throw new EffectivelyError(
          ErrorCodes.EFF_SCHEMA_INCOMPATIBLE,
          `schema ${id} is ${writer.format}; this serde reads ${codec.format}`,
        );
      }
      return codec.reader(writer.schema);
    });

  return {
    format: codec.format,
    contentType: codec.contentType,
    subjectFor: (topic) => subjectOf(topic, codec.recordName),
    register: (topic) => idFor(subjectOf(topic, codec.recordName)),
    async serialize(topic, data) {
      const payload = codec.encode(data);
      return encodeWire(await idFor(subjectOf(topic, codec.recordName)), payload);
    },
    async deserialize(topic, value) {
      let id: number | undefined;
      try {
        const wire = decodeWire(value);
        id = wire.id;
        return (await readerFor(wire.id))(wire.payload) as T;
      } catch (error) {
        throw onRecord(error, { topic, ...(id === undefined ? {} : { schemaId: id }) });
      }
    },
  };
}
