// The poison scenario as a test: poison at a partition's head is dead-lettered while the other partitions flow, and a
// redrive after the fix (crashing once between send and mark, then resumed) applies each event exactly once. The naive
// twin (no dead letters: a record that keeps failing stops its partition) must leave events stuck. Some events must
// arrive twice, so that a missing dedup check shows: on Kafka the chunk sent before the crash goes out again; embedded,
// the redrive sends and marks in one commit (the crash undoes the send), so the source replays the dead events.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type PoisonOptions, type PoisonResult, runPoison } from '../../scenarios/poison/run.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema, freshTopic } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const quiet = () => undefined;
const size = { events: 400, partitions: 4, poison: 4, log: quiet };

function assertRecovered(r: PoisonResult): void {
  assert.equal(r.applied + r.dead, 400, 'before the fix every event is applied or dead');
  assert.equal(r.dead, 4);
  assert.equal(r.redriven, 4);
  assert.equal(r.recoveredTransient, 4, 'the flaky events recovered in place');
  assert.equal(r.duplicated, 0);
  assert.equal(r.lost, 0);
  assert.ok(r.redriveCrashed, 'the redrive crashed once between its send and its mark');
  assert.ok(r.resent > 0, `some events were sent twice (resent=${r.resent})`);
  // The rest flows: no healthy partition waited as long as a failing record held its own partition.
  assert.ok(
    r.blockedMs < r.heldMs,
    `healthy partitions waited ${r.blockedMs} ms, a failing record held ${r.heldMs} ms`,
  );
}

/** The poison run on PGlite with the `postgres` transport. */
async function embedded(t: TestContext, options: Partial<PoisonOptions> = {}): Promise<PoisonResult> {
  const db = await pgliteDb();
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema: 'poison', pollIntervalMs: 10 });
  return runPoison({ db, transport, schema: 'poison', topic: 'tickets', ...size, replayDead: true, ...options });
}

test('embedded: poison at the head is dead-lettered, the rest flows, the redrive applies each event once', async (t) => {
  assertRecovered(await embedded(t));
});

test('kafka: poison at the head is dead-lettered, the rest flows, the redrive applies each event once', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 4);
  assertRecovered(await runPoison({ db, transport, schema, topic, ...size }));
});

test('naive twin: without dead letters the poisoned partition stops and events are stuck', async (t) => {
  const r = await embedded(t, { mode: 'stop-on-poison', settleMs: 8000 });
  assert.ok(r.lost > 0, `events stuck behind the poison (lost=${r.lost})`);
});
