/**
 * Avro in the registry's wire format, with `avsc` (Avro for JavaScript): `Type.forSchema` builds the writer's and
 * the reader's types, `createResolver` applies Avro's schema resolution (defaults for added fields, aliases,
 * promotions), `toBuffer` / `fromBuffer` write and read the binary encoding. Decoded records are avsc record
 * instances (plain fields, a class per record type); `bytes` are Buffers, `long` numbers.
 */
import avsc from 'avsc';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { parseSchema } from '../registry/canonical.ts';
import { checkAvroBounds } from './avro-bounds.ts';
import { type Codec, createSerde, type Serde, type SerdeOptions } from './serde.ts';

export const avroContentType = 'application/avro';

const typeOf = (schema: unknown): avsc.Type => avsc.Type.forSchema(schema as avsc.Schema);

/** The paths (and values) where `data` does not fit `type`. */
function mismatches(type: avsc.Type, data: unknown): string[] {
  const found: string[] = [];
  type.isValid(data, {
    errorHook: (path: string[], value: unknown) => {
      if (found.length < 10) found.push(`${path.join('.') || '(root)'}: ${JSON.stringify(value) ?? String(value)}`);
    },
  });
  return found;
}

/** A serde for Avro values; `options.schema` is an Avro schema. */
export function avroSerde<T = unknown>(options: SerdeOptions): Serde<T> {
  const own = typeOf(parseSchema(options.schema, 'avro'));
  const codec: Codec = {
    format: 'avro',
    contentType: avroContentType,
    recordName: own.typeName === 'record' ? own.name : undefined,
    encode(data) {
      const wrong = mismatches(own, data);
      if (wrong.length > 0) {
        throw new EffectivelyError(
          ErrorCodes.EFF_SCHEMA_ENCODE_FAILED,
          `value does not match the Avro schema ${own.name ?? own.typeName}: ${wrong.join('; ')}`,
          { details: { errors: wrong } },
        );
      }
      return own.toBuffer(data);
    },
    reader(writerText) {
      const writer = typeOf(JSON.parse(writerText));
      let resolver: avsc.Resolver | undefined;
      if (!writer.equals(own)) {
        try {
          resolver = own.createResolver(writer);
        } catch (error) {
          throw new EffectivelyError(
            ErrorCodes.EFF_SCHEMA_INCOMPATIBLE,
            `the reader's Avro schema cannot read the writer's: ${(error as Error).message}`,
            { cause: error },
          );
        }
      }
      return (payload) => {
        try {
          // the counts and lengths checked against the bytes first: avsc trusts a block count (avro-bounds.ts)
          checkAvroBounds(writer as never, payload);
          return own.fromBuffer(payload, resolver);
        } catch (error) {
          throw new EffectivelyError(
            ErrorCodes.EFF_SCHEMA_DECODE_FAILED,
            `Avro payload does not decode with its writer's schema: ${(error as Error).message}`,
            { cause: error },
          );
        }
      };
    },
  };
  return createSerde<T>(codec, options);
}
