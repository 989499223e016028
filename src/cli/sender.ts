import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';
import { httpProvider } from '../effects/http-provider.ts';
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
