// Durations past 2^31 ms: a lease or a retry delay that long overflowed the SQL `::int` casts (22003, integer out of
// range), so the sender claimed nothing, ever; a call timeout that long would fire at once (Node's timer limit) and is
// refused. Real PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEffects } from '../../src/effects/ledger.ts';
import { ProviderError } from '../../src/effects/provider.ts';
import { createSender } from '../../src/effects/sender.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('a lease of 2^32 ms and a retry cap of 2^32 ms: the effect is claimed, retried and done', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'k', kind: 'email', payload: {} }));
  let calls = 0;
  const sender = createSender({
    db,
    schema,
    leaseMs: 2 ** 32,
    retry: { baseMs: 0, capMs: 2 ** 32 },
    pollIntervalMs: 20,
    logger: silentLogger,
    provider: async () => {
      calls += 1;
      if (calls === 1) throw new ProviderError('transient', 'once', { retryAfterMs: 0 });
      return { reference: 'ok' };
    },
  });
  t.after(() => sender.close());
  await sender.start();
  await eventually(async () => (await effects.list(db, { ids: [id] }))[0]?.status === 'done', 10_000, 'done');
  assert.equal(calls, 2);
});

test('a call timeout over the timer limit is refused', () => {
  assert.throws(
    () =>
      createSender({ db: undefined as never, provider: async () => ({}), callTimeoutMs: 2 ** 31, leaseMs: 2 ** 32 }),
    { code: ErrorCodes.EFF_INVALID_OPTIONS },
  );
});
