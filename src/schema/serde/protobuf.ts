/**
 * Protobuf in the registry's wire format, with protobufjs (it parses `.proto` text at run time, which is what a
 * registry hands a reader; see docs/schema-evolution.md for the choice). After the magic byte and the schema id come
 * the message indexes (which message of the file), then the message's binary encoding. A reader decodes with its own
 * schema's message of the same full name: Protobuf matches fields by number, skips the ones it does not know, and
 * gives absent ones their defaults. Decoded values are plain objects keyed by the reader's field names: 64-bit
 * integers as decimal strings, enums by name, bytes as Buffers, unset proto3 fields at their defaults.
 */
import type protobuf from 'protobufjs';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import { importNames, indexesOf, messageAt, outlineProto, type ProtoFile, parseProto } from '../protobuf/proto-file.ts';
import { messageErrors } from '../protobuf/proto-value.ts';
import { canonicalSchema } from '../registry/canonical.ts';
import type { SchemaReference, SchemaRegistry } from '../registry/port.ts';
import { decodeMessageIndexes, encodeMessageIndexes } from './message-indexes.ts';
import { type Codec, createSerde, type Serde, type SerdeOptions } from './serde.ts';

export const protobufContentType = 'application/protobuf';

export interface ProtobufSerdeOptions extends SerdeOptions {
  /** The `.proto` file's text. */
  schema: string;
  /**
   * The files it imports, by import name (`"common.proto"` → its text), imports of imports included. Each is
   * registered under a subject named after the import (`common.proto`) and referenced by the schema. The well-known
   * types (`google/protobuf/*.proto`) are built in. Default none.
   */
  imports?: Record<string, string>;
  /** Which message of the file this serde writes and reads, by full name (default the file's first message). */
  message?: string;
}

const toObjectOptions: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true };

const decodeFailed = (message: string, cause?: unknown) =>
  new EffectivelyError(ErrorCodes.EFF_SCHEMA_DECODE_FAILED, message, cause === undefined ? {} : { cause });

/** Registers (or finds) each imported file under its import name, its own imports first; the references to them. */
async function referencesFor(
  text: string,
  imports: Record<string, string>,
  registry: SchemaRegistry,
  autoRegister: boolean,
  seen: Set<string> = new Set(),
): Promise<SchemaReference[]> {
  const references: SchemaReference[] = [];
  for (const name of importNames(text)) {
    const imported = imports[name];
    if (imported === undefined) throw invalidOptions('imports', `has no \`${name}\`, which the schema imports`);
    if (seen.has(name)) throw invalidOptions('imports', `\`${name}\` imports itself (an import cycle)`);
    const own = await referencesFor(imported, imports, registry, autoRegister, new Set([...seen, name]));
    if (autoRegister) await registry.register(name, imported, 'protobuf', own);
    const found = await registry.lookup(name, imported, 'protobuf', own);
    if (!found)
      throw new EffectivelyError(
        ErrorCodes.EFF_SCHEMA_NOT_FOUND,
        `subject \`${name}\` does not have the imported file \`${name}\`, and autoRegister is off`,
        { details: { subject: name } },
      );
    references.push({ name, subject: name, version: found.version });
  }
  return references;
}

/** A serde for Protobuf messages; `options.schema` is the `.proto` text. */
export function protobufSerde<T = Record<string, unknown>>(options: ProtobufSerdeOptions): Serde<T> {
  if (typeof options.schema !== 'string') throw invalidOptions('schema', 'must be the text of a .proto file');
  const imports = options.imports ?? {};
  canonicalSchema(options.schema, 'protobuf'); // the syntax, with the message the registry would give
  const own: ProtoFile = parseProto({ schema: options.schema, imports });
  const name = options.message ?? own.messages[0];
  const indexes = name === undefined ? undefined : indexesOf(own, name);
  if (name === undefined || indexes === undefined)
    throw invalidOptions(
      'message',
      `\`${name ?? '(none)'}\` is not a message of the schema (${own.messages.join(', ')})`,
    );
  const type = own.root.lookupType(name);
  const header = encodeMessageIndexes(indexes);
  const readers = new Map<string, protobuf.Type | undefined>();
  const readerType = (fullName: string) => {
    if (!readers.has(fullName)) {
      const found = own.root.lookup(fullName);
      readers.set(fullName, found && 'fieldsArray' in found ? (found as protobuf.Type) : undefined);
    }
    return readers.get(fullName);
  };
  const codec: Codec = {
    format: 'protobuf',
    contentType: protobufContentType,
    recordName: name,
    encode(data) {
      const wrong = messageErrors(type, data);
      if (wrong.length > 0) {
        throw new EffectivelyError(
          ErrorCodes.EFF_SCHEMA_ENCODE_FAILED,
          `value does not match the Protobuf message ${name}: ${wrong.join('; ')}`,
          { details: { errors: wrong } },
        );
      }
      return Buffer.concat([header, type.encode(type.fromObject(data as Record<string, unknown>)).finish()]);
    },
    reader(writerText) {
      const writer = outlineProto(writerText);
      return (payload) => {
        const { indexes: at, payload: bytes } = decodeMessageIndexes(payload);
        const written = messageAt(writer, at);
        if (!written) throw decodeFailed(`message indexes [${at.join(', ')}] name no message of the writer's schema`);
        const fullName = written.fullName.slice(1);
        const reader = readerType(fullName);
        if (!reader) {
          throw new EffectivelyError(
            ErrorCodes.EFF_SCHEMA_INCOMPATIBLE,
            `the record is a \`${fullName}\`, a message the reader's schema does not have`,
            { details: { message: fullName } },
          );
        }
        let message: protobuf.Message;
        try {
          message = reader.decode(bytes);
        } catch (error) {
          throw decodeFailed(`Protobuf payload does not decode as ${fullName}: ${(error as Error).message}`, error);
        }
        return reader.toObject(message, toObjectOptions);
      };
    },
    references: (registry, autoRegister) => referencesFor(options.schema, imports, registry, autoRegister),
  };
  return createSerde<T>(codec, options);
}
