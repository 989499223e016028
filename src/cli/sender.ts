import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';
import { httpProvider } from '../effects/http-provider.ts';
import { createEffects, type Effect, type EffectStatus } from '../effects/ledger.ts';
import type { PendingEffect } from '../effects/provider.ts';
import { createSender } from '../effects/sender.ts';
import { withoutCredentials } from './printable.ts';

export interface SenderArgs {
  schema: string;
  url?: string | undefined;
  kinds?: string | undefined;
  rate?: string | undefined;
  concurrency?: string | undefined;
  /** `envelope` (default): `{ id, key, kind, payload }`; `payload`: the payload alone. */
  body?: string | undefined;
  lookup: boolean;
}

export interface EffectsArgs {
  schema: string;
  status?: string | undefined;
  kind?: string | undefined;
  ids?: string | undefined;
  limit?: string | undefined;
  json: boolean;
}

function positive(name: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (n > 0 && Number.isFinite(n) && (!integer || Number.isInteger(n))) return n;
  throw new Error(`--${name} takes a positive ${integer ? 'whole ' : ''}number, not ${value}`);
}

/** effectively sender --url u [--schema s] [--kinds a,b] [--rate n] [--concurrency n] [--body b] [--lookup]. */
export async function senderCommand(db: Db, args: SenderArgs): Promise<number> {
  let rate: number | undefined;
  let concurrency: number | undefined;
  try {
    if (!args.url) throw new Error('--url is required');
    if (args.body !== undefined && args.body !== 'envelope' && args.body !== 'payload') {
      throw new Error(`--body is envelope or payload, not ${args.body}`);
    }
    // an unset variable (`--kinds "$KINDS"`) must not mean every kind: e-mails and charges POSTed to a webhook
    if (args.kinds?.split(',').every((kind) => kind.trim() === '')) {
      throw new Error('--kinds is empty; name the kinds, or leave the option out for every kind');
    }
    rate = positive('rate', args.rate, false);
    concurrency = positive('concurrency', args.concurrency, true);
  } catch (error) {
    console.error(`sender: ${(error as Error).message}`);
    return 2;
  }
  const kinds = args.kinds
    ?.split(',')
    .map((kind) => kind.trim())
    .filter(Boolean);
  const http = httpProvider({
    url: args.url,
    ...(args.body === 'payload' ? { body: (effect: PendingEffect) => effect.payload } : {}),
  });
  await migrate(db, { schema: args.schema });
  const sender = createSender({
    db,
    schema: args.schema,
    provider: http,
    ...(args.lookup ? { lookup: http.lookup } : {}),
    ...(kinds && kinds.length > 0 ? { kinds } : {}),
    ...(rate === undefined ? {} : { rateLimit: { perSecond: rate } }),
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  await sender.start();
  console.log(`sender: calling ${withoutCredentials(args.url)} for ${kinds?.length ? kinds.join(',') : 'all kinds'}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sender.close();
  const s = sender.stats;
  console.log(
    `sender: calls=${s.calls} done=${s.done} retried=${s.retried} dead=${s.dead} timeouts=${s.timeouts} ` +
      `settled_by_lookup=${s.settledByLookup} unrecorded=${s.unrecorded}`,
  );
  return 0;
}

const statuses = new Set<string>(['pending', 'done', 'dead']);

function line(e: Effect): string {
  const error = e.lastError ? `\t${e.lastCode}: ${e.lastError.slice(0, 80)}` : '';
  return `${e.id}\t${e.kind}\t${e.key}\t${e.status}\t${e.attempts}x${error}`;
}

/** effectively effects list [--status s] [--kind k] [--limit n] [--json] | revive --ids a,b (dead effects). */
export async function effectsCommand(db: Db, action: string | undefined, args: EffectsArgs): Promise<number> {
  const effects = createEffects({ schema: args.schema });
  if (action === 'list') {
    if (args.status !== undefined && !statuses.has(args.status)) {
      console.error(`effects: --status is pending, done or dead, not ${args.status}`);
      return 2;
    }
    const limit = args.limit === undefined ? undefined : Number(args.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      console.error(`effects: --limit takes a positive whole number, not ${args.limit}`);
      return 2;
    }
    const listed = await effects.list(db, {
      ...(args.status === undefined ? {} : { status: args.status as EffectStatus }),
      ...(args.kind === undefined ? {} : { kind: args.kind }),
      ...(limit === undefined ? {} : { limit }),
    });
    if (args.json) console.log(JSON.stringify(listed));
    else {
      for (const effect of listed) console.log(line(effect));
      console.log(`effects: listed ${listed.length}`);
    }
    return 0;
  }
  if (action === 'revive') {
    const ids = args.ids?.split(',').filter(Boolean) ?? [];
    if (ids.length === 0) {
      console.error('effects: revive wants --ids a,b (the ids of dead effects)');
      return 2;
    }
    console.log(`effects: revived ${await effects.revive(db, ids)}`);
    return 0;
  }
  console.error('usage: effectively effects list [--status s] [--kind k] [--limit n] [--json] | revive --ids a,b');
  return 2;
}
