import type { Db } from '../db/port.ts';
import { createEffects, type Effect, type EffectStatus } from '../effects/ledger.ts';
import { consoleOutput, type Output } from './output.ts';
import { printable } from './printable.ts';

export interface EffectsArgs {
  schema: string;
  status?: string | undefined;
  kind?: string | undefined;
  ids?: string | undefined;
  limit?: string | undefined;
  /** `purge`: how old a done or cancelled effect must be, e.g. `30d`, `12h`, `90m` (no default: say it). */
  olderThan?: string | undefined;
  json: boolean;
}

const statuses = new Set<string>(['pending', 'done', 'dead', 'cancelled']);
const usage =
  'usage: effectively effects list [--status s] [--kind k] [--limit n] [--json] | revive --ids a,b | cancel --ids a,b | purge --older-than 30d';
const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `90m`, `45s` → milliseconds; undefined when it is not such a duration. */
export function durationMs(text: string | undefined): number | undefined {
  const match = /^([0-9]+)([smhd])$/.exec(text ?? '');
  if (!match) return undefined;
  const ms = Number(match[1]) * (units[match[2]!] ?? 0);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

function line(e: Effect): string {
  const error = e.lastError ? `\t${e.lastCode}: ${e.lastError.slice(0, 80)}` : '';
  return printable(`${e.id}\t${e.kind}\t${e.key}\t${e.status}\t${e.attempts}x${error}`);
}

function idsOf(args: EffectsArgs): string[] {
  return (
    args.ids
      ?.split(',')
      .map((id) => id.trim())
      .filter(Boolean) ?? []
  );
}

/** effectively effects list | revive --ids | cancel --ids | purge --older-than: the effects ledger. */
export async function effectsCommand(
  db: Db,
  action: string | undefined,
  args: EffectsArgs,
  output: Output = consoleOutput,
): Promise<number> {
  const effects = createEffects({ schema: args.schema });
  switch (action) {
    case 'list': {
      if (args.status !== undefined && !statuses.has(args.status)) {
        output.error(`effects: --status is one of ${[...statuses].join(', ')}, not ${printable(args.status)}`);
        return 2;
      }
      const limit = args.limit === undefined ? undefined : Number(args.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
        output.error(`effects: --limit takes a positive whole number, not ${printable(args.limit ?? '')}`);
        return 2;
      }
      const listed = await effects.list(db, {
        ...(args.status === undefined ? {} : { status: args.status as EffectStatus }),
        ...(args.kind === undefined ? {} : { kind: args.kind }),
        ...(limit === undefined ? {} : { limit }),
      });
      if (args.json) output.log(JSON.stringify(listed));
      else {
        for (const effect of listed) output.log(line(effect));
        output.log(`effects: listed ${listed.length}`);
      }
      return 0;
    }
    case 'revive':
    case 'cancel': {
      const ids = idsOf(args);
      if (ids.length === 0) {
        output.error(`effects: ${action} wants --ids a,b (a decision per effect, never a sweep by accident)`);
        return 2;
      }
      if (action === 'revive') {
        output.log(`effects: revived ${await effects.revive(db, ids)}`);
        return 0;
      }
      const { cancelled, inDoubt } = await effects.cancel(db, ids);
      output.log(`effects: cancelled ${cancelled.length} of ${ids.length}`);
      if (cancelled.length < ids.length)
        output.log('effects: the others are done, already cancelled, unknown, or being sent right now (try again)');
      if (inDoubt.length > 0)
        output.log(`effects: in doubt (an earlier call may have reached the provider): ${inDoubt.join(',')}`);
      return 0;
    }
    case 'purge': {
      const olderThanMs = durationMs(args.olderThan);
      if (olderThanMs === undefined) {
        output.error(
          'effects: purge wants --older-than <n>s|m|h|d (done and cancelled effects older than that are deleted; keep it at least the dedup retention)',
        );
        return 2;
      }
      output.log(`effects: purged ${await effects.purge(db, { olderThanMs })}`);
      return 0;
    }
    default:
      output.error(usage);
      return 2;
  }
}
