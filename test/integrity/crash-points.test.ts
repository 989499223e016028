// Each named crash point as a deterministic test: real child processes on real Kafka + PostgreSQL, one of them
// SIGKILLed at the named hop, then restarted; the audit must find every order with exactly one e-mail. Each test has a
// naive twin that the same fault must break, so we know the audit can see a failure. A protected run must also end
// complete (nothing pending, not stopped on a stall): an audit of nothing sent finds nothing lost and nothing twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChaosOptions, type ChaosResult, runChaos } from '../../scenarios/chaos/run.ts';
import { needs } from '../support/services.ts';

const events = 400;
const base: Omit<ChaosOptions, 'crashAt'> = { events, kills: 0, rate: 400, idleMs: 4000, timeoutMs: 90_000 };

async function crashAt(crash: NonNullable<ChaosOptions['crashAt']>, mode: ChaosOptions['mode'] = 'effectively') {
  const result = await runChaos({ ...base, mode, crashAt: crash });
  const [point] = Object.values(crash);
  assert.ok(
    (result.killsAt[point!] ?? 0) >= 1,
    `the process was killed at ${point}: ${JSON.stringify(result.killsAt)}`,
  );
  assert.equal(result.orders, events);
  return result;
}

/** Every event delivered once: nothing lost, nothing twice, nothing still pending, and the run completed. */
function deliveredOnce(result: ChaosResult) {
  const said = JSON.stringify({ ...result, config: undefined, recoveries: undefined });
  assert.deepEqual(
    [result.lost, result.duplicated, result.pending, result.stoppedEarly],
    [0, 0, 0, false],
    `lost, duplicated, pending, stopped early: ${said}`,
  );
}

test('consumer killed after the DB commit, before the offset commit: redelivered, deduplicated', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ consumer: 'consumer:after-db-commit' });
  deliveredOnce(result);
});

test('naive twin (no dedup row) under the same kill sends Ana a second e-mail', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ consumer: 'consumer:after-db-commit' }, 'no-dedup');
  assert.equal(result.lost, 0);
  assert.ok(result.duplicated > 0, `expected duplicates, got ${result.duplicated}`);
});

test('consumer killed mid-batch, before the DB commit: nothing applied, all redelivered', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ consumer: 'consumer:before-db-commit' });
  deliveredOnce(result);
});

test('naive twin (offset committed first) under the same kill loses e-mails', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ consumer: 'consumer:before-db-commit' }, 'offset-first');
  assert.ok(result.lost > 0, `expected lost e-mails, got ${result.lost}`);
});

test('relay killed after the broker acked, before the outbox rows were deleted: republished, deduplicated', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ relay: 'relay:after-publish' });
  deliveredOnce(result);
});

test('naive twin (consumer without dedup) sees the republished events twice', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ relay: 'relay:after-publish' }, 'no-dedup');
  assert.ok(result.duplicated > 0, `expected duplicates, got ${result.duplicated}`);
});

test('order service killed after saving the order, before any publish: the outbox still delivers it', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ writer: 'writer:after-save' });
  deliveredOnce(result);
});

test('naive twin (publish after commit, no outbox) loses Bruno’s e-mail under the same kill', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await crashAt({ writer: 'writer:after-save' }, 'no-outbox');
  assert.ok(result.lost > 0, `expected lost e-mails, got ${result.lost}`);
});

test('a short chaos run with random and hop kills over relay and consumer: nothing lost, nothing twice', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const result = await runChaos({ events: 1500, kills: 6, rate: 500, timeoutMs: 120_000 });
  assert.ok(result.kills >= 6, `expected 6 kills, got ${result.kills}`);
  deliveredOnce(result);
});
