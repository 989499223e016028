// A record dead-lettered, whose offset commit was then lost (a crash or a rebalance before it reached the broker),
// comes again to the partition's next holder. It has no dedup row, so it used to be tried afresh: applied when it
// would pass now (applied AND kept as a dead letter; an operator's redrive then finds a duplicate), or dead-lettered
// again (the alert fired twice). The first batch of a partition since its assignment now looks up the group's dead
// letters from where it starts, and a record found there with the same event is passed over. The same coordinates with
// another event (a topic deleted and created again) are applied: nothing skipped in silence. Real PostgreSQL, the
// postgres transport; the lost commit is the group's offset set back, as a crash would leave it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { embeddedLog, sendKeyed } from '../support/embedded-log.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** The consumer's database, whose first dead-letter lookup fails (the transport keeps the real one). */
function failingFirstLookup(db: Db): Db {
  let failed = false;
  return new Proxy(db, {
    get(target, name, receiver) {
      if (name !== 'query') return Reflect.get(target, name, receiver);
      return (sql: string, params?: unknown[]) => {
        if (!failed && sql.includes('dead_letters') && sql.includes('LIMIT $5')) {
          failed = true;
          return Promise.reject(new Error('lookup refused (test)'));
        }
        return target.query(sql, params);
      };
    },
  });
}

const variants = [
  'same event',
  'same event, its first lookup failing',
  'same event, the last record of the partition',
  'another event at those coordinates',
] as const;
for (const variant of variants) {
  test(`a dead letter whose offset commit was lost is not tried again when it comes back (${variant})`, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db, schema, transport, consumerOf } = await embeddedLog(t);
    const topic = 'orders';
    // With the dead letter last, only a position written for the record passed over moves the group to the end.
    const keys = variant.includes('last') ? ['k0', 'k1'] : ['k0', 'k1', 'k2'];
    await sendKeyed(transport, topic, keys);

    const run = async (refuse: boolean) => {
      const calls: number[] = [];
      const applied: number[] = [];
      let deadLetters = 0;
      const consumer = createConsumer({
        ...consumerOf(topic),
        ...(variant.includes('failing') && !refuse ? { db: failingFirstLookup(db) } : {}),
        onDeadLetter: () => {
          deadLetters += 1;
        },
        handler: async (event) => {
          const { n } = event.data as { n: number };
          calls.push(n);
          if (refuse && n === 1) throw new PermanentError('refused');
        },
        onOutcome: (event, outcome) => {
          if (outcome === 'applied') applied.push((event.data as { n: number }).n);
        },
      });
      await consumer.start();
      const lag = async () => {
        const { rows } = await db.query<{ next: string }>(
          `SELECT next_offset::text AS next FROM ${schema}.log_offsets WHERE group_id = 'g'`,
        );
        return rows[0]?.next === String(keys.length);
      };
      await eventually(lag, 20_000, 'the group at the end of the partition');
      await consumer.close();
      return { calls, applied, deadLetters };
    };

    const first = await run(true);
    assert.deepEqual(first.applied, keys.length === 3 ? [0, 2] : [0]);
    assert.equal(first.deadLetters, 1);
    // The commit past the dead letter is lost: the group is back at the start, as a crash before the commit leaves it.
    // With the dead letter last, from it: the batch holds nothing but the record passed over.
    const from = variant.includes('last') ? 1 : 0;
    await db.query(`UPDATE ${schema}.log_offsets SET next_offset = $1 WHERE group_id = 'g'`, [from]);
    if (variant.startsWith('another')) {
      await db.query(`UPDATE ${schema}.dead_letters SET event_id = gen_random_uuid()`);
    }

    const second = await run(false);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.dead_letters`);
    assert.equal(rows[0]?.n, 1, 'still one dead letter');
    assert.equal(second.deadLetters, 0);
    if (variant.startsWith('same')) {
      assert.deepEqual(second.calls, [], 'the dead letter is passed over; the others are duplicates');
      assert.deepEqual(second.applied, []);
    } else {
      assert.deepEqual(second.calls, [1], 'another event at those coordinates is applied');
      assert.deepEqual(second.applied, [1]);
    }
  });
}

test('the dead-letter lookup reads a page at a time, in offset order, and says when it reached the end', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const store = deadLetterStore({ schema });
  for (const offset of ['7', '3', '12']) {
    const record = {
      ...encodeEvent(createEvent({ topic: 'orders', type: 't', source: '/t', key: 'k', data: {} })),
      partition: 0,
      offset,
      key: null,
      timestamp: 0,
    };
    await store.keep(db, {
      consumer: 'g',
      record: { ...record, headers: {} },
      eventId: crypto.randomUUID(),
      error: new Error('refused'),
      attempts: 1,
      firstFailedAt: new Date(),
    });
  }
  const page = (from: string) =>
    store.givenUpFrom(db, { consumer: 'g', topic: 'orders', partition: 0, from, limit: 2 });
  const first = await page('0');
  assert.deepEqual([...first.letters.keys()], ['3', '7']);
  assert.equal(first.complete, false);
  const second = await page('8');
  assert.deepEqual([...second.letters.keys()], ['12']);
  assert.equal(second.complete, true);
  // A redriven letter's copy went out again: the record itself is no longer passed over.
  await db.query(`UPDATE ${schema}.dead_letters SET status = 'redriven' WHERE "offset" = 7`);
  assert.deepEqual([...(await page('0')).letters.keys()], ['3', '12']);
  assert.equal(
    (await store.givenUpFrom(db, { consumer: 'other', topic: 'orders', partition: 0, from: '0' })).letters.size,
    0,
  );
});
