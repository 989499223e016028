import type { Db } from '../db/port.ts';
import { type DeadLetter, type DeadLetterFilter, type DeadLetterStore, deadLetterStore } from '../deadletter/store.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { Output } from './output.ts';
import { progress } from './progress.ts';
import { type RedriveTarget, redriveTarget } from './redrive-target.ts';

/** The exit code of a command stopped by SIGINT/SIGTERM (128 + SIGINT): a script must not read it as done. */
const interrupted = 130;

export interface RedriveArgs {
  schema: string;
  transport?: string | undefined;
  json: boolean;
  dryRun: boolean;
  force?: boolean;
  all?: boolean;
}

/** "orders (2), payments (1)": how many went to each topic. */
function byTopic(letters: DeadLetter[]): string {
  const counts = new Map<string, number>();
  for (const letter of letters) counts.set(letter.topic, (counts.get(letter.topic) ?? 0) + 1);
  return [...counts].map(([topic, count]) => `${topic} (${count})`).join(', ');
}

/** Why nothing was redriven: what the filter matches in the other statuses, and how to take those. */
async function whyNone(db: Db, store: DeadLetterStore, filter: DeadLetterFilter): Promise<string> {
  const taken = filter.status ?? 'dead';
  const others = [];
  for (const status of ['dead', 'redriven', 'discarded'] as const) {
    if (status === taken) continue;
    const count = (await store.list(db, { ...filter, status, limit: 10_000 })).length;
    if (count > 0) others.push(`${count} ${status}`);
  }
  const hint = others.some((other) => other.endsWith(' redriven'))
    ? '; --status redriven redrives those again (the consumers deduplicate)'
    : '';
  return `dlq: no ${taken} letter matches${others.length > 0 ? `, the filter matches ${others.join(', ')}` : ''}${hint}`;
}

/**
 * effectively dlq redrive: sends the selected letters back to their topics with the transport named, or the one the
 * Db implies (redrive-target.ts), and says where they went. Ctrl-C stops between chunks: what was sent is marked,
 * the rest stays as it was and the same command resumes it.
 */
export async function redriveCommand(
  db: Db,
  filter: DeadLetterFilter,
  args: RedriveArgs,
  output: Output,
  print: (letters: DeadLetter[], verb: string) => void,
): Promise<number> {
  const store = deadLetterStore({ schema: args.schema });
  // The signal handler goes in before the first await: a SIGINT arriving at once is not lost.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  let producer: ReturnType<RedriveTarget['transport']['producer']> | undefined;
  let bar: ReturnType<typeof progress> | undefined;
  try {
    const target = args.dryRun ? undefined : redriveTarget(db, args.schema, args.transport);
    producer = target?.transport.producer({ clientId: 'effectively-dlq' });
    const letters = await store.redrive(db, producer ?? unusedProducer, filter, {
      dryRun: args.dryRun,
      force: args.force ?? false,
      signal: stop.signal,
      onProgress: (done, total) => {
        if (args.json) return;
        bar ??= progress('dlq redrive', total, 'redriven', output);
        bar.update(done);
      },
    });
    bar?.end();
    // where they went (or why none went), on stderr under --json so stdout stays one JSON document
    const say = (line: string) => (args.json ? output.error(line) : output.log(line));
    if (target && letters.length > 0)
      say(`dlq: sent with the ${target.name} transport to ${target.where}: ${byTopic(letters)}`);
    if (letters.length === 0) say(await whyNone(db, store, filter));
    print(letters, args.dryRun ? 'would redrive' : 'redriven');
    if (stop.signal.aborted) {
      output.error('dlq: interrupted; run the same command again to resume');
      return interrupted;
    }
    return 0;
  } catch (error) {
    if (error instanceof EffectivelyError && error.code === ErrorCodes.EFF_REDRIVE_BEYOND_RETENTION) {
      output.error(`dlq: ${error.code}: ${error.message} (ids ${String(error.details.ids)}); --force to redrive`);
      return 1;
    }
    throw error;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await producer?.close();
  }
}

/** A dry run sends nothing: a producer that says so if it is ever asked. */
const unusedProducer = {
  send: () => Promise.reject(new Error('a dry run sends nothing')),
  close: () => Promise.resolve(),
} as unknown as Parameters<DeadLetterStore['redrive']>[1];
