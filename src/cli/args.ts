import { parseArgs } from 'node:util';
import { defaultSchema } from '../db/identifiers.ts';

/** Every option of every command (each command reads its own); one table so the CLI and `operatorCommand` agree. */
const options = {
  schema: { type: 'string', default: defaultSchema() },
  shards: { type: 'string' },
  partitions: { type: 'string' },
  consumer: { type: 'string' },
  topic: { type: 'string' },
  code: { type: 'string' },
  status: { type: 'string' },
  ids: { type: 'string' },
  seqs: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  force: { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  transport: { type: 'string' },
  json: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  url: { type: 'string' },
  kinds: { type: 'string' },
  kind: { type: 'string' },
  'older-than': { type: 'string' },
  rate: { type: 'string' },
  concurrency: { type: 'string' },
  body: { type: 'string' },
  lookup: { type: 'boolean', default: false },
  'max-lag': { type: 'string' },
  'stuck-after': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'read-only': { type: 'boolean', default: false },
} as const;

/** A command's arguments (after the command's name). Throws on an unknown option or a missing value. */
export function parseCommandArgs(args: readonly string[]) {
  return parseArgs({ args: [...args], allowPositionals: true, options });
}

export type CommandValues = ReturnType<typeof parseCommandArgs>['values'];
