// The three boxoffice scenarios, short, embedded (one PGlite for all: its start is the slow part). Naive twin: the
// notification-system run with the order service's Idempotency-Key rows switched off counts duplicates (the
// "lost answer" requests sent again made orders of their own); the payment-system run without the order service's
// SeatsRefused consumer counts its refused orders, charged and never cancelled, as lost.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { storyNames } from '../../scenarios/boxoffice/stories.ts';
import type { Db } from '../../src/db/port.ts';
import { pgliteDb } from '../../src/index.ts';
import { assertClean, runShort } from './scenarios-support.ts';

let db: Db;
before(async () => {
  db = await pgliteDb();
});
after(() => db.close());

for (const name of storyNames) {
  test(`${name}, short, embedded: nothing lost or doubled`, async () => {
    assertClean(await runShort(name, 'embedded', { embeddedDb: db }), name);
  });
}

test('naive twin: without Idempotency-Key rows the audit counts the resent requests as duplicates', async () => {
  const result = await runShort('notification-system', 'embedded', { embeddedDb: db, idempotencyKeys: false });
  assert.match(result.line, /duplicates=[1-9]/);
  assert.equal(result.ok, false);
});

test('naive twin: without the SeatsRefused consumer the audit counts the refused orders as lost', async () => {
  const result = await runShort('payment-system', 'embedded', { embeddedDb: db, cancelRefused: false, stallMs: 2000 });
  assert.ok(result.audit.uncompensated > 0, 'refused orders left charged');
  assert.match(result.line, /lost=[1-9]/);
  assert.equal(result.ok, false);
});
