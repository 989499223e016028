// The options both relays (the poller and the WAL reader) share, checked and defaulted in one place.
import { librarySchema } from '../db/identifiers.ts';
import { invalidOptions } from '../errors.ts';
import { stderrLogger } from '../observability/logger.ts';
import type { RelayOptions } from './relay-options.ts';
import { defaultShards } from './shard.ts';

export function relaySettings(options: RelayOptions) {
  const schema = librarySchema(options.schema);
  const shards = options.shards ?? defaultShards;
  const batchSize = options.batchSize ?? 1000;
  const batchBytes = options.batchBytes ?? 32 * 1024 * 1024;
  const errorBackoffMs = options.errorBackoffMs ?? 1000;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw invalidOptions('batchSize', 'a positive integer');
  if (!(Number.isSafeInteger(batchBytes) && batchBytes > 0)) throw invalidOptions('batchBytes', 'a positive integer');
  // Any length (sleep() waits a long one in turns), never negative or not a number.
  if (!(errorBackoffMs >= 0)) throw invalidOptions('errorBackoffMs', 'a number of ms, 0 or more');
  const logger = options.logger ?? stderrLogger;
  return { schema, shards, batchSize, batchBytes, errorBackoffMs, logger };
}
