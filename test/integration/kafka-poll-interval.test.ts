// On the real broker (issue 27, item 6): a member whose handler outlives max.poll.interval.ms is put out of the group,
// and nothing aborts its batch. The partition's new owner looks up the dead letters (none yet) and waits on the first
// member's uncommitted dedup claim of the record; when that handler fails, its transaction rolls back, the new owner
// applies the record, and the first member gives up on it in a new transaction. It used to keep a dead letter of the
// record the new owner was applying: applied AND dead, a stale letter an operator might redrive or discard. Giving up
// now claims the event's dedup row in its transaction (waiting for the new owner's claim) and keeps no letter of an
// event applied meanwhile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('kafka, a member past max.poll.interval.ms gives up on a record the new owner applies: no dead letter', async (t) => {
  if (!(await needs(t, 'kafka')) || !(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const producer = transport.producer();
  await producer.send([encodeEvent(createEvent({ topic, type: 't', source: '/poll', key: 'k', data: { n: 0 } }))]);
  await producer.close();
  const group = randomName('g');
  const applied: string[] = [];
  let slowEntered = false;
  // The new owner's claim of the record's dedup row, waiting on the slow member's uncommitted one.
  const nextWaiting = async () =>
    (
      await db.query<{ c: number }>(
        `SELECT count(*)::int AS c FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE $1 AND datname = current_database()`,
        [`%${schema}.processed_events%`],
      )
    ).rows[0]!.c > 0;
  const member = (name: 'slow' | 'next') =>
    createConsumer({
      db,
      // The slow member is put out of the group once its handler outlives max.poll.interval.ms (7 s).
      transport:
        name === 'slow' ? kafkaTransport({ clientId: 'poll', rdkafka: { 'max.poll.interval.ms': 7000 } }) : transport,
      group,
      topics: [topic],
      schema,
      logger: silentLogger,
      sessionTimeoutMs: 6000,
      maxAttempts: 1,
      handler: async () => {
        if (name === 'next') {
          await sleep(500); // the new owner's transaction is still open while the slow member gives up
          return;
        }
        slowEntered = true;
        await eventually(nextWaiting, 60_000, 'the new owner waiting on the dedup claim');
        throw new PermanentError('failed here while the new owner waits to apply it');
      },
      onOutcome: (_, outcome) => {
        if (outcome === 'applied') applied.push(name);
      },
    });
  const slow = member('slow');
  t.after(() => slow.close());
  await slow.start();
  await eventually(async () => slowEntered, 30_000, 'the slow member in its handler');
  const next = member('next');
  t.after(() => next.close());
  await next.start();
  await eventually(async () => applied.includes('next'), 60_000, 'the new owner applied the record');
  const letters = async () =>
    (await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${schema}.dead_letters`)).rows[0]!.c;
  await Promise.all([slow.close(), next.close()]);
  assert.deepEqual(applied, ['next'], 'applied once, by the new owner');
  assert.equal(await letters(), 0, 'no dead letter of an applied event');
});
