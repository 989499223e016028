import { fnv1a } from '../hash.ts';

/** Default number of key shards; every writer and relay of one schema must use the same value. */
export const defaultShards = 16;

/** A stable shard per key, so one relay at a time owns each key's order. */
export function shardOf(key: string, shards: number): number {
  return fnv1a(key) % shards;
}
