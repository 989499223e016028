/**
 * The Protobuf part of the registry's wire format: after the magic byte and the schema id, which message of the
 * schema's file the payload is, as an array of indexes (the top-level message's place in the file, then the nested
 * message's place in it, ...). Written as zig-zag varints: the count, then each index; the common case, the first
 * message ([0]), is the single byte 0.
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

/** More nesting than any real schema: a count past it is a corrupt (or hostile) value, not a deep message. */
const maxDepth = 100;

const failed = (message: string) => new EffectivelyError(ErrorCodes.EFF_SCHEMA_DECODE_FAILED, message);

function writeZigzag(out: number[], value: number): void {
  let n = ((value << 1) ^ (value >> 31)) >>> 0;
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
}

export function encodeMessageIndexes(indexes: number[]): Buffer {
  if (indexes.length === 1 && indexes[0] === 0) return Buffer.from([0]);
  const out: number[] = [];
  writeZigzag(out, indexes.length);
  for (const index of indexes) writeZigzag(out, index);
  return Buffer.from(out);
}

/** The indexes at the start of `bytes` and where the payload begins; `EFF_SCHEMA_DECODE_FAILED` when malformed. */
export function decodeMessageIndexes(bytes: Buffer): { indexes: number[]; payload: Buffer } {
  let offset = 0;
  const read = (): number => {
    let n = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = bytes[offset++];
      if (byte === undefined) throw failed('the Protobuf message indexes run past the end of the value');
      n |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return (n >>> 1) ^ -(n & 1);
    }
    throw failed('a Protobuf message index is longer than a 32-bit varint');
  };
  const count = read();
  if (count < 0 || count > maxDepth) throw failed(`${count} Protobuf message indexes: not a valid header`);
  const indexes = count === 0 ? [0] : Array.from({ length: count }, read);
  if (indexes.some((index) => index < 0)) throw failed(`negative Protobuf message index in [${indexes.join(', ')}]`);
  return { indexes, payload: bytes.subarray(offset) };
}
