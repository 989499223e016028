// The outbox stands alone: topic versioning plugs into it (`expand`), the outbox imports nothing of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEvent } from '../../src/envelope/event.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { declareTopicVersion } from '../../src/schema/versioning/declare.ts';
import { versionExpander } from '../../src/schema/versioning/expand.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('createOutbox({ expand: versionExpander(versions) }) writes both versions in dual-write, in one transaction', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const versions = [
    declareTopicVersion({
      from: 'orders',
      to: 'orders.v2',
      phase: 'dual-write',
      upcast: (event) => ({ ...event, data: { ...(event.data as object), v: 2 } }),
    }),
  ];
  const outbox = createOutbox({ schema, expand: versionExpander(versions) });
  const event = createEvent({ topic: 'orders', type: 'order.placed', source: '/t', key: 'o-1', data: { n: 1 } });
  await db.transaction((tx) => outbox.enqueue(tx, event));
  const { rows } = await db.query<{ topic: string; id: string }>(
    `SELECT topic, id::text AS id FROM ${schema}.outbox ORDER BY seq`,
  );
  assert.deepEqual(
    rows.map((row) => row.topic),
    ['orders', 'orders.v2'],
  );
  assert.equal(rows[0]?.id, rows[1]?.id, 'one fact, one id, two topics');
  // A plug-in that refuses fails the enqueue, so the caller's transaction: nothing written.
  const refusing = createOutbox({ schema, expand: versionExpander(versions) });
  const early = createEvent({ topic: 'orders.v2', type: 'order.placed', source: '/t', key: 'o-2', data: {} });
  await assert.rejects(
    db.transaction((tx) => refusing.enqueue(tx, early)),
    { code: 'EFF_INVALID_EVENT' },
  );
  assert.equal((await db.query(`SELECT 1 FROM ${schema}.outbox`)).rows.length, 2);
});
