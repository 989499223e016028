// Issue 11 item 9: the dead-letter alert compared net counts, so letters that arrived while a redrive (or a discard)
// took others away were never announced. It now counts the letters ever kept (rows are never deleted), so new ones
// raise an alert whatever left meanwhile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Queryable } from '../../src/db/port.ts';
import { createDeadLetterAlerts, type DeadLetterAlert } from '../../src/deadletter/alerts.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';

test('dead-letter alerts: a new letter is announced even while more letters leave at the same time', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'dl_alerts_masked';
  await migrate(db, { schema });
  const store = deadLetterStore({ schema });
  const keep = (tx: Queryable, offset: string) =>
    store.keep(tx, {
      consumer: 'notifications',
      record: { topic: 'orders', partition: 0, offset, key: null, value: Buffer.from('{}'), headers: {}, timestamp: 0 },
      eventId: null,
      error: new PermanentError('bad order'),
      attempts: 1,
      firstFailedAt: new Date(),
    });
  for (const offset of ['1', '2', '3']) await keep(db, offset);
  const seen: DeadLetterAlert[] = [];
  const alerts = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 50,
    onAlert: (a) => seen.push(a),
    logger: silentLogger,
  });
  t.after(() => alerts.close());
  await alerts.start();
  await eventually(async () => seen.length === 1, 10_000, 'the first alert');
  assert.deepEqual([seen[0]!.kind, seen[0]!.dead, seen[0]!.added], ['non-empty', 3, 3]);
  // in one commit: three letters discarded (an operator's decision) and a new one kept: net -2
  const ids = (await store.list(db)).map((letter) => letter.id);
  await db.transaction(async (tx) => {
    await store.discard(tx, ids);
    await keep(tx, '4');
  });
  await eventually(async () => seen.length === 2, 10_000, 'the alert of the new letter');
  assert.deepEqual([seen[1]!.kind, seen[1]!.dead, seen[1]!.added], ['growing', 1, 1]);
  assert.equal(alerts.dead, 1);
});
