/** Default number of key shards; every writer and relay of one schema must use the same value. */
export const defaultShards = 16;

/** FNV-1a over the key's UTF-8 bytes: a stable shard per key, so one relay at a time owns each key's order. */
export function shardOf(key: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
