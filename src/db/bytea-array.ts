// A `bytea[]` parameter in PostgreSQL's binary array format. node-postgres turns a JS array of Buffers into one text
// literal with every element in hex: twice the bytes, in one string, and past about 256 MB of payload the string is
// longer than V8 allows (`RangeError: Invalid string length`, no code). A Buffer parameter goes to the server as binary
// instead (array_recv reads it for a `$n::bytea[]` parameter): the bytes as they are, no string at all.

const byteaOid = 17;

/** `values` as one binary `bytea[]` parameter (null elements allowed); pass it where the SQL says `$n::bytea[]`. */
export function byteaArray(values: readonly (Buffer | null)[]): Buffer {
  const hasNull = values.some((value) => value === null);
  const header = values.length === 0 ? 12 : 20;
  const size = values.reduce((sum, value) => sum + 4 + (value?.length ?? 0), header);
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(values.length === 0 ? 0 : 1, 0); // dimensions
  out.writeInt32BE(hasNull ? 1 : 0, 4);
  out.writeUInt32BE(byteaOid, 8);
  if (values.length === 0) return out;
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16); // lower bound
  let at = header;
  for (const value of values) {
    if (value === null) {
      out.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    out.writeInt32BE(value.length, at);
    value.copy(out, at + 4);
    at += 4 + value.length;
  }
  return out;
}
