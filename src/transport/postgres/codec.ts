import { fnv1a } from '../../hash.ts';

/** Header values are bytes; in the jsonb column they are base64 strings (see db/storable.ts for names). */
export { decodeHeaders, encodeHeaders } from '../../db/storable.ts';

/** Records of one key always land on one partition; records without a key on partition 0. */
export function partitionOf(key: string | null, partitions: number): number {
  return key === null ? 0 : fnv1a(key) % partitions;
}
