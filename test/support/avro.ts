/** Avro's zig-zag varint of `n` (a count, a length, a block size), for tests that write payloads by hand. */
export function avroVarint(n: number): number[] {
  let value = n >= 0 ? BigInt(n) * 2n : -BigInt(n) * 2n - 1n;
  const bytes: number[] = [];
  while (value >= 0x80n) {
    bytes.push(Number((value & 0x7fn) | 0x80n));
    value >>= 7n;
  }
  bytes.push(Number(value));
  return bytes;
}
