// The Kafka consumer's bounded close (close.ts): what a timed-out close names as uncommitted, and the bound itself.
// The real broker case (a frozen coordinator) is test/integration/review-commit-close.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { disconnectWithin, UnansweredCommits } from '../../src/transport/kafka/close.ts';

test('unanswered commits: a confirmed position is no longer outstanding; a refused or older answer leaves it', () => {
  const ledger = new UnansweredCommits();
  ledger.sent([
    { topic: 't', partition: 0, offset: '5' },
    { topic: 't', partition: 1, offset: '9' },
  ]);
  ledger.answered(true, [{ topic: 't', partition: 0, offset: 5 }]); // refused
  ledger.answered(false, [{ topic: 't', partition: 1, offset: 7 }]); // an older position's answer
  assert.deepEqual(
    ledger.list().map((tp) => `${tp.partition}@${tp.offset}`),
    ['0@5', '1@9'],
  );
  ledger.answered(false, [{ topic: 't', partition: 0, offset: 5 }]);
  assert.deepEqual(
    ledger.list().map((tp) => `${tp.partition}@${tp.offset}`),
    ['1@9'],
  );
});

function recording() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: { ...silentLogger, warn: (_: string, fields?: Record<string, unknown>) => void lines.push(fields ?? {}) },
  };
}

test('bounded close: a disconnect within the bound logs nothing; its failure is close()’s', async () => {
  const { lines, logger } = recording();
  const options = { timeoutMs: 1000, group: 'g', logger, uncommitted: () => [] };
  await disconnectWithin(Promise.resolve(), options);
  await assert.rejects(disconnectWithin(Promise.reject(new Error('broken')), options), /broken/);
  assert.deepEqual(lines, []);
});

test('bounded close: past the bound it returns with EFF_CLOSE_TIMEOUT naming what was left uncommitted', async () => {
  const { lines, logger } = recording();
  const never = new Promise<void>(() => undefined);
  const uncommitted = () => [{ topic: 'orders', partition: 2, offset: '41' }];
  // The bound's timer does not hold the process (the client's pending close does, in life): this one stands in for it.
  const alive = setInterval(() => undefined, 1000);
  await disconnectWithin(never, { timeoutMs: 20, group: 'g', logger, uncommitted }).finally(() => clearInterval(alive));
  assert.deepEqual(lines, [{ code: 'EFF_CLOSE_TIMEOUT', group: 'g', timeoutMs: 20, uncommitted: ['orders[2]@41'] }]);
});
