import type { Db } from '../db/port.ts';
import { discardRefused, listRefused, retryRefused } from '../outbox/refused.ts';
import { consoleOutput, type Output } from './output.ts';
import { printable } from './printable.ts';

export interface OutboxArgs {
  schema: string;
  /** Outbox positions (`seq`) of refused rows, comma-separated. */
  seqs?: string | undefined;
  all?: boolean;
  json: boolean;
}

const usage =
  'usage: effectively outbox refused [--json] | retry --seqs a,b|--all | discard --seqs a,b   (rows the transport refused for good)';

/**
 * effectively outbox refused | retry | discard — the outbox rows the relay set aside because the transport refused
 * them for good (too large for the topic, a topic that does not exist...), and the rows of their keys held behind them.
 */
export async function outboxCommand(
  db: Db,
  action: string | undefined,
  args: OutboxArgs,
  output: Output = consoleOutput,
): Promise<number> {
  const seqs = args.seqs
    ?.split(',')
    .map((seq) => seq.trim())
    .filter(Boolean);
  if (seqs?.some((seq) => !/^[0-9]+$/.test(seq))) {
    output.error(`outbox: --seqs takes outbox positions (whole numbers), not ${printable(args.seqs ?? '')}`);
    return 2;
  }
  switch (action) {
    case 'refused': {
      const rows = await listRefused(db, { schema: args.schema });
      if (args.json) output.log(JSON.stringify(rows));
      else {
        for (const row of rows)
          output.log(
            printable(
              `${row.seq}\t${row.topic}\t${row.key}\t${row.errorCode}\t${row.size ?? 0} B\t${row.held} held\t${row.reason.slice(0, 80)}`,
            ),
          );
        output.log(`outbox: refused ${rows.length}`);
      }
      return 0;
    }
    case 'retry':
    case 'discard': {
      // discarding drops events for good: one decision per row; a retry of every row only needs to be said
      if (!seqs?.length && (action === 'discard' || !args.all)) {
        output.error(
          action === 'discard'
            ? 'outbox: discard needs --seqs (the events are never published: a decision per row)'
            : 'outbox: retry needs --seqs, or --all for every refused row',
        );
        return 2;
      }
      const selection = { schema: args.schema, ...(seqs?.length ? { seqs } : {}) };
      const count = action === 'retry' ? await retryRefused(db, selection) : await discardRefused(db, selection);
      output.log(`outbox: ${action === 'retry' ? 'put back' : 'discarded'} ${count}`);
      return 0;
    }
    default:
      output.error(usage);
      return 2;
  }
}
