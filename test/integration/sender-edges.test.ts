// Issue 11 item 7 (the sender): an empty kinds list is refused (it meant "every kind", so a webhook sender POSTed
// e-mails and charges); an in-doubt effect waits at least the call timeout before its lookup or next call (the
// provider may still be working on the timed-out one); lookups count against the rate limit; NUL bytes in a
// provider's answer do not fail the recording (the effect was reclaimed for ever); an effect whose claims keep ending
// without a recorded outcome (a sender that crashes on it) stops at maxAttempts instead of counting up for ever.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createRateLimiter, type RateLimiter } from '../../src/backpressure/rate-limiter.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { type EffectProvider, ProviderError } from '../../src/effects/provider.ts';
import { createSender, type SenderOptions } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';

const schema = 'sender_edges';

async function setup(t: TestContext) {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema });
  const effects = createEffects({ schema });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'order-1', kind: 'email', payload: { n: 1 } }));
  const row = async () =>
    (
      await db.query<{
        status: string;
        attempts: number;
        last_error: string | null;
        provider_ref: string | null;
        wait_ms: number;
      }>(
        `SELECT status, attempts, last_error, provider_ref,
                (extract(epoch FROM next_attempt_at - updated_at) * 1000)::float8 AS wait_ms
           FROM ${schema}.effects WHERE id = $1`,
        [id],
      )
    ).rows[0]!;
  return { db, id, row };
}

function start(t: TestContext, db: Db, options: Partial<SenderOptions> & Pick<SenderOptions, 'provider'>) {
  const sender = createSender({ db, schema, logger: silentLogger, pollIntervalMs: 10, ...options });
  t.after(() => sender.close());
  void sender.start();
  return sender;
}

test('sender edges: an empty kinds list is refused, not read as every kind', async (t) => {
  const { db } = await setup(t);
  const provider: EffectProvider = async () => ({});
  assert.throws(() => createSender({ db, schema, provider, kinds: [] }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => createSender({ db, schema, provider, kinds: [''] }), { code: 'EFF_INVALID_OPTIONS' });
  // naive twin: a kinds list with a kind, and no list at all, are accepted
  await createSender({ db, schema, provider, kinds: ['email'] }).close();
  await createSender({ db, schema, provider }).close();
});

test('sender edges: a timed-out (in-doubt) effect waits at least callTimeoutMs before it is tried again', async (t) => {
  const { db } = await setup(t);
  // the provider never answers: every call times out; the backoff alone would retry at once (capMs 0)
  const events: [string, number][] = [];
  const provider: EffectProvider = (_effect, { signal }) => {
    events.push(['call', Date.now()]);
    return new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        events.push(['abort', Date.now()]);
        reject(signal.reason);
      }),
    );
  };
  start(t, db, { provider, callTimeoutMs: 300, leaseMs: 5000, retry: { baseMs: 0, capMs: 0 } });
  await eventually(async () => events.filter(([what]) => what === 'call').length >= 2, 10_000, 'a second call');
  const abortedAt = events.find(([what]) => what === 'abort')![1];
  const again = events.filter(([what]) => what === 'call')[1]![1];
  // a lower bound only (a slow machine makes it longer, never shorter)
  assert.ok(again - abortedAt >= 300, `called again ${again - abortedAt} ms after the timeout`);
});

test('sender edges: a lookup takes a token of the rate limit like a call', async (t) => {
  const { db, id } = await setup(t);
  await db.query(`UPDATE ${schema}.effects SET in_doubt = true WHERE id = $1`, [id]);
  // the real limiter, counting the tokens the sender takes from it
  const inner = createRateLimiter({ perSecond: 1000, burst: 10 });
  let taken = 0;
  const limiter: RateLimiter = {
    ...inner,
    tryTake: (n = 1) => {
      const took = inner.tryTake(n);
      if (took) taken += n;
      return took;
    },
    take: async (signal) => {
      const took = await inner.take(signal);
      if (took) taken += 1;
      return took;
    },
  };
  let lookups = 0;
  let calls = 0;
  const sender = start(t, db, {
    provider: async () => {
      calls += 1;
      return {};
    },
    lookup: async () => {
      lookups += 1;
      return undefined;
    },
    rateLimit: limiter,
  });
  await eventually(async () => sender.stats.done === 1, 10_000, 'done');
  await sender.close();
  assert.deepEqual([lookups, calls], [1, 1]);
  assert.equal(taken, 2, 'one token for the lookup, one for the call');
});

test('sender edges: NUL bytes in a provider answer or error are recorded, not a failure to record', async (t) => {
  const { db, row } = await setup(t);
  const sender = start(t, db, { provider: async () => ({ reference: 'ref\u0000x' }) });
  await eventually(async () => sender.stats.done + sender.stats.unrecorded > 0, 10_000, 'an outcome');
  assert.equal(sender.stats.unrecorded, 0);
  assert.deepEqual([(await row()).status, (await row()).provider_ref], ['done', 'ref\\0x']);
});

test('sender edges: a NUL in a permanent refusal is recorded and the effect is dead', async (t) => {
  const { db, row } = await setup(t);
  const sender = start(t, db, {
    provider: async () => {
      throw new ProviderError('permanent', 'refused: \u0000bad\ud800');
    },
  });
  await eventually(async () => sender.stats.dead + sender.stats.unrecorded > 0, 10_000, 'an outcome');
  assert.equal(sender.stats.unrecorded, 0);
  const { status, last_error: error } = await row();
  assert.equal(status, 'dead');
  assert.match(error ?? '', /refused: \\0bad/);
});

test('sender edges: claims that never recorded an outcome stop at maxAttempts (dead, provider not called)', async (t) => {
  const { db, id, row } = await setup(t);
  // three earlier claims ended without an outcome (the sender died holding them): attempts 3, lease still set
  await db.query(
    `UPDATE ${schema}.effects SET attempts = 3, lease_id = gen_random_uuid(), next_attempt_at = now() WHERE id = $1`,
    [id],
  );
  let calls = 0;
  const sender = start(t, db, {
    maxAttempts: 3,
    provider: async () => {
      calls += 1;
      return {};
    },
  });
  await eventually(async () => (await row()).status !== 'pending', 10_000, 'settled');
  assert.equal((await row()).status, 'dead');
  assert.equal(calls, 0, 'not called a 4th time');
  assert.match((await row()).last_error ?? '', /claimed 4 times/);
  assert.equal(sender.stats.dead, 1);
});

test('sender edges (naive twin): an effect within maxAttempts is called', async (t) => {
  const { db, id, row } = await setup(t);
  await db.query(`UPDATE ${schema}.effects SET attempts = 2 WHERE id = $1`, [id]);
  let calls = 0;
  start(t, db, {
    maxAttempts: 3,
    provider: async () => {
      calls += 1;
      return {};
    },
  });
  await eventually(async () => (await row()).status !== 'pending', 10_000, 'settled');
  assert.deepEqual([(await row()).status, calls], ['done', 1]);
});
