/**
 * Confluent's wire format: magic byte 0, the writer's schema id as a 4-byte big-endian integer, then the payload
 * (Avro binary, or UTF-8 JSON for JSON Schema).
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

const magic = 0;
export const headerBytes = 5;

export function encodeWire(id: number, payload: Uint8Array): Buffer {
  // a registry's answer that was no id (NaN from an HTML page) must not be written as id 0
  if (!(Number.isSafeInteger(id) && id >= 0 && id <= 0x7fffffff)) {
    throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_ENCODE_FAILED, `schema id ${id} is not a 32-bit integer`, {
      details: { id },
    });
  }
  const header = Buffer.alloc(headerBytes);
  header.writeUInt8(magic, 0);
  header.writeInt32BE(id, 1);
  return Buffer.concat([header, payload]);
}

/** Splits a value into schema id and payload; `EFF_SCHEMA_DECODE_FAILED` when it is not in the wire format. */
export function decodeWire(value: Uint8Array | null | undefined): { id: number; payload: Buffer } {
  if (!value || value.length < headerBytes || value[0] !== magic) {
    const what = !value ? 'no value' : value.length < headerBytes ? `${value.length} bytes` : `magic byte ${value[0]}`;
    throw new EffectivelyError(
      ErrorCodes.EFF_SCHEMA_DECODE_FAILED,
      `value is not in the schema registry wire format (${what}; expected byte 0, a 4-byte schema id, the payload)`,
    );
  }
  const buffer = Buffer.from(value.buffer, value.byteOffset, value.length);
  return { id: buffer.readInt32BE(1), payload: buffer.subarray(headerBytes) };
}
