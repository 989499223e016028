import type { Db } from '../db/port.ts';
import { type DeadLetter, type DeadLetterStatus, deadLetterStore } from '../deadletter/store.ts';
import { redriveCommand } from './dlq-redrive.ts';
import { consoleOutput, type Output } from './output.ts';
import { printable } from './printable.ts';

export interface DlqArgs {
  schema: string;
  consumer?: string | undefined;
  topic?: string | undefined;
  code?: string | undefined;
  status?: string | undefined;
  ids?: string | undefined;
  limit?: string | undefined;
  transport?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  json: boolean;
  dryRun: boolean;
  force?: boolean;
  /** `redrive` without a filter redrives every group's letters: it asks for this flag. */
  all?: boolean;
}

const statuses = new Set(['dead', 'redriven', 'discarded']);
const transports = new Set(['kafka', 'postgres']);

function summary(letter: DeadLetter) {
  return {
    id: letter.id,
    consumer: letter.consumer,
    topic: letter.topic,
    partition: letter.partition,
    offset: letter.offset,
    eventId: letter.eventId,
    key: letter.key,
    code: letter.code,
    reason: letter.reason,
    attempts: letter.attempts,
    firstFailedAt: letter.firstFailedAt,
    lastFailedAt: letter.lastFailedAt,
    status: letter.status,
  };
}

function print(output: Output, letters: DeadLetter[], json: boolean, verb: string, count = letters.length): void {
  if (json) {
    output.log(JSON.stringify(letters.map(summary)));
    return;
  }
  if (letters.length > 0) output.log('id\tconsumer\ttopic[partition]@offset\tcode\tattempts\treason');
  for (const l of letters) {
    const line = `${l.id}\t${l.consumer}\t${l.topic}[${l.partition}]@${l.offset}\t${l.code}\t${l.attempts}x\t${l.reason.slice(0, 80)}`;
    output.log(printable(line));
  }
  output.log(`dlq: ${verb} ${count}`);
}

/** effectively dlq list|show|redrive|discard — the dead-letter store from the command line. */
export async function dlqCommand(
  db: Db,
  action: string | undefined,
  args: DlqArgs,
  output: Output = consoleOutput,
): Promise<number> {
  const store = deadLetterStore({ schema: args.schema });
  if (args.status !== undefined && !statuses.has(args.status)) {
    output.error(`dlq: --status must be one of ${[...statuses].join(', ')}`);
    return 2;
  }
  if (args.transport !== undefined && !transports.has(args.transport)) {
    output.error(`dlq: --transport must be one of ${[...transports].join(', ')}, not ${printable(args.transport)}`);
    return 2;
  }
  const filter = {
    ...(args.consumer ? { consumer: args.consumer } : {}),
    ...(args.topic ? { topic: args.topic } : {}),
    ...(args.code ? { code: args.code } : {}),
    ...(args.ids ? { ids: args.ids.split(',').map((id) => id.trim()) } : {}),
    ...(args.status ? { status: args.status as DeadLetterStatus } : {}),
    ...(args.limit ? { limit: Number(args.limit) } : {}),
    ...(args.since ? { since: new Date(args.since) } : {}),
    ...(args.until ? { until: new Date(args.until) } : {}),
  };
  for (const [name, date] of [
    ['--since', filter.since],
    ['--until', filter.until],
  ] as const) {
    if (date && Number.isNaN(date.getTime())) {
      output.error(`dlq: ${name} must be a date or time (ISO 8601, e.g. 2026-12-01T10:00:00Z)`);
      return 2;
    }
  }
  switch (action) {
    case 'list':
      print(output, await store.list(db, filter), args.json, 'listed');
      return 0;
    case 'show': {
      const letters = await store.list(db, filter);
      if (args.json)
        output.log(
          JSON.stringify(
            letters.map((l) => ({
              ...summary(l),
              payload: l.payload?.toString('base64') ?? null,
              headers: Object.fromEntries(Object.entries(l.headers).map(([k, v]) => [k, v.toString()])),
            })),
          ),
        );
      else
        for (const l of letters)
          output.log(
            `${printable(JSON.stringify(summary(l), null, 2))} \npayload: ${printable(l.payload?.toString('utf8').slice(0, 2000) ?? 'null')}`,
          );
      return letters.length > 0 ? 0 : 1;
    }
    case 'redrive': {
      const selected = ['consumer', 'topic', 'code', 'ids', 'since', 'until'].some((name) => name in filter);
      if (!selected && !args.all && !args.dryRun) {
        output.error(
          "dlq: redrive with no filter would redrive every group's dead letters: select them (--consumer, --topic, --code, --ids, --since, --until), look first (--dry-run), or say --all",
        );
        return 2;
      }
      return redriveCommand(db, filter, args, output, (letters, verb) => print(output, letters, args.json, verb));
    }
    case 'discard': {
      if (!args.ids) {
        output.error('dlq: discard needs --ids (a decision per record, never a sweep by accident)');
        return 2;
      }
      const letters = await store.list(db, filter);
      if (args.dryRun) {
        print(output, letters, args.json, 'would discard');
        return 0;
      }
      // what was discarded, not what was listed: a letter redriven or discarded meanwhile is not
      const discarded = await store.discard(
        db,
        letters.map((l) => l.id),
      );
      print(output, letters, args.json, 'discarded', discarded);
      if (discarded < letters.length && !args.json)
        output.log(`dlq: ${letters.length - discarded} of those listed were no longer dead`);
      return 0;
    }
    default:
      output.error(
        'usage: effectively dlq list|show|redrive|discard [--consumer g] [--topic t] [--code c] [--ids 1,2] [--status s] [--since t] [--until t] [--limit n] [--transport kafka|postgres] [--dry-run] [--force] [--all] [--json]',
      );
      return 2;
  }
}
