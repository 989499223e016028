/**
 * JSON Schema in the registry's wire format, with `ajv` (and `ajv-formats` for `format`): the payload is UTF-8
 * JSON; it is validated against the serde's schema on write, against the writer's schema and then the reader's
 * (this serde's) on read. JSON Schema has no resolution step: the value is read as it is.
 */
import AjvModule, { type ValidateFunction } from 'ajv';
import Ajv2019Module from 'ajv/dist/2019.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { EffectivelyError, type ErrorCode, ErrorCodes } from '../../errors.ts';
import { parseSchema } from '../registry/canonical.ts';
import { type Codec, createSerde, type Serde, type SerdeOptions } from './serde.ts';

export const jsonSchemaContentType = 'application/schema+json';

const Ajv = AjvModule.default;
const Ajv2019 = Ajv2019Module.default;
const Ajv2020 = Ajv2020Module.default;
const addFormats = formatsModule.default;

/** Compiles a schema with the Ajv class of its `$schema` (draft-07 when it names none), in its own instance. */
function compile(schema: unknown): ValidateFunction {
  const dialect = String((schema as { $schema?: unknown })?.$schema ?? '');
  const options = { strict: false, allErrors: true };
  const ajv = dialect.includes('2020-12')
    ? new Ajv2020(options)
    : dialect.includes('2019-09')
      ? new Ajv2019(options)
      : new Ajv(options);
  addFormats(ajv);
  try {
    return ajv.compile(schema as object);
  } catch (error) {
    throw new EffectivelyError(
      ErrorCodes.EFF_SCHEMA_INVALID,
      `JSON Schema does not compile: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

/** Throws `code` when `validate` refuses `value`, with ajv's errors (path and message). */
function check(validate: ValidateFunction, value: unknown, code: ErrorCode, what: string): void {
  if (validate(value)) return;
  const errors = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
  throw new EffectivelyError(code, `${what}: ${errors.join('; ')}`, { details: { errors } });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A serde for JSON values; `options.schema` is a JSON Schema. */
export function jsonSchemaSerde<T = unknown>(options: SerdeOptions): Serde<T> {
  const parsed = parseSchema(options.schema, 'json') as { title?: unknown };
  const own = compile(parsed);
  const codec: Codec = {
    format: 'json',
    contentType: jsonSchemaContentType,
    recordName: typeof parsed.title === 'string' && parsed.title ? parsed.title : undefined,
    encode(data) {
      check(own, data, ErrorCodes.EFF_SCHEMA_ENCODE_FAILED, 'value does not match the JSON Schema');
      return Buffer.from(JSON.stringify(data));
    },
    reader(writerText) {
      const writer = compile(JSON.parse(writerText));
      return (payload) => {
        let value: unknown;
        try {
          value = JSON.parse(utf8.decode(payload));
        } catch (error) {
          throw new EffectivelyError(
            ErrorCodes.EFF_SCHEMA_DECODE_FAILED,
            `payload is not UTF-8 JSON: ${(error as Error).message}`,
            { cause: error },
          );
        }
        check(writer, value, ErrorCodes.EFF_SCHEMA_DECODE_FAILED, "value is not valid under its writer's schema");
        check(own, value, ErrorCodes.EFF_SCHEMA_INCOMPATIBLE, "value is not valid under the reader's schema");
        return value;
      };
    },
  };
  return createSerde<T>(codec, options);
}
