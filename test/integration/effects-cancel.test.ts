// Cancelling effects that were not performed, and purging done and cancelled ones by age, through the ledger and the
// CLI. Real PostgreSQL; a real sender with a counting provider shows a cancelled effect is never performed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationMs, effectsCommand } from '../../src/cli/effects.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createSender } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function captured(work: () => Promise<number>): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = (...args: unknown[]) => lines.push(args.join(' '));
  console.error = console.log;
  try {
    return { code: await work(), out: lines.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

test('cancel: pending and dead effects are cancelled and never performed; a live claim, a done one are left', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const [pending, claimed, dead, done, expired] = await db.transaction(async (tx) => {
    const ids: string[] = [];
    for (const key of ['pending', 'claimed', 'dead', 'done', 'expired'])
      ids.push(await effects.schedule(tx, { key, kind: 'email', payload: { key } }));
    return ids as [string, string, string, string, string];
  });
  // what a sender leaves behind: a live claim, a dead one, a done one, a claim whose sender died mid-call
  await db.query(
    `UPDATE ${schema}.effects SET lease_id = gen_random_uuid(), next_attempt_at = now() + interval '1 hour' WHERE id = $1`,
    [claimed],
  );
  await db.query(`UPDATE ${schema}.effects SET status = 'dead' WHERE id = $1`, [dead]);
  await db.query(`UPDATE ${schema}.effects SET status = 'done' WHERE id = $1`, [done]);
  await db.query(
    `UPDATE ${schema}.effects SET lease_id = gen_random_uuid(), next_attempt_at = now() - interval '1 second' WHERE id = $1`,
    [expired],
  );

  const { code, out } = await captured(() =>
    effectsCommand(db, 'cancel', { schema, json: false, ids: [pending, claimed, dead, done, expired].join(',') }),
  );
  assert.equal(code, 0);
  assert.match(out, /effects: cancelled 3 of 5/);
  assert.match(out, new RegExp(`in doubt.*${expired}`));
  const status = async (id: string) => (await effects.list(db, { ids: [id] }))[0]?.status;
  assert.deepEqual(await Promise.all([pending, claimed, dead, done, expired].map(status)), [
    'cancelled',
    'pending',
    'cancelled',
    'done',
    'cancelled',
  ]);

  // The live claim's sender gives it back (its outcome is recorded), then a sender runs: only it is performed.
  await db.query(`UPDATE ${schema}.effects SET lease_id = NULL, next_attempt_at = now() WHERE id = $1`, [claimed]);
  const performed: string[] = [];
  const sender = createSender({
    db,
    schema,
    logger: silentLogger,
    pollIntervalMs: 20,
    provider: async (effect) => {
      performed.push(effect.key);
      return { reference: 'ok' };
    },
  });
  t.after(() => sender.close());
  await sender.start();
  await eventually(async () => (await status(claimed)) === 'done', 10_000, 'the uncancelled effect performed');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(performed, ['claimed'], 'cancelled effects are never performed');
  assert.equal(await effects.count(db, 'cancelled'), 3);

  // revive and cancel without ids are usage errors: no sweep by accident
  assert.equal((await captured(() => effectsCommand(db, 'cancel', { schema, json: false }))).code, 2);
});

test('purge: done and cancelled effects older than the given age are deleted; pending and dead stay', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const ids = await db.transaction(async (tx) => {
    const out: string[] = [];
    for (let n = 0; n < 25; n++) out.push(await effects.schedule(tx, { key: `k${n}`, kind: 'email', payload: { n } }));
    return out;
  });
  // 10 old done, 5 old cancelled, 5 recent done, 3 old pending, 2 old dead
  const set = (from: number, to: number, status: string, age: string) =>
    db.query(`UPDATE ${schema}.effects SET status = $2, updated_at = now() - $3::interval WHERE id = ANY($1::uuid[])`, [
      ids.slice(from, to),
      status,
      age,
    ]);
  await set(0, 10, 'done', '40 days');
  await set(10, 15, 'cancelled', '40 days');
  await set(15, 20, 'done', '1 hour');
  await set(20, 23, 'pending', '40 days');
  await set(23, 25, 'dead', '40 days');

  const refused = await captured(() => effectsCommand(db, 'purge', { schema, json: false }));
  assert.equal(refused.code, 2, 'no age given: nothing purged');
  assert.equal((await effects.list(db)).length, 25);

  assert.equal(await effects.purge(db, { olderThanMs: durationMs('30d')!, chunk: 4 }), 15, 'in chunks of 4');
  const left = await effects.list(db);
  assert.equal(left.length, 10);
  assert.deepEqual(left.map((e) => e.status).sort(), [
    'dead',
    'dead',
    'done',
    'done',
    'done',
    'done',
    'done',
    'pending',
    'pending',
    'pending',
  ]);
  const cli = await captured(() => effectsCommand(db, 'purge', { schema, json: false, olderThan: '30m' }));
  assert.deepEqual([cli.code, cli.out], [0, 'effects: purged 5']);
});

test('durationMs reads s, m, h and d and refuses anything else', () => {
  assert.equal(durationMs('45s'), 45_000);
  assert.equal(durationMs('2h'), 7_200_000);
  assert.equal(durationMs('30d'), 2_592_000_000);
  for (const bad of [undefined, '', '30', 'd', '1.5h', '-1d', '3w']) assert.equal(durationMs(bad), undefined, bad);
});
