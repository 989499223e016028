/** FNV-1a (32-bit) over a string's UTF-8 bytes: a stable, fast hash for placing keys on shards and partitions. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
