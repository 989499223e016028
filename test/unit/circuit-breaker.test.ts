// The breaker's states in virtual time (an injected clock): closed → open → half-open → closed, and back to open when
// a probe fails. No wall-clock timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CircuitStateChange, createCircuitBreaker } from '../../src/backpressure/circuit-breaker.ts';

function setup(overrides: Parameters<typeof createCircuitBreaker>[0] = {}) {
  let time = 0;
  const breaker = createCircuitBreaker({
    failureRatio: 0.5,
    windowMs: 10_000,
    minimumCalls: 4,
    openMs: 5000,
    now: () => time,
    ...overrides,
  });
  const changes: CircuitStateChange[] = [];
  breaker.onStateChange((change) => changes.push(change));
  const call = (ok: boolean) => {
    assert.ok(breaker.tryAcquire(), `a permit at ${time} (${breaker.state})`);
    if (ok) breaker.success();
    else breaker.failure();
  };
  const advance = (ms: number) => {
    time += ms;
  };
  return { breaker, changes, call, advance };
}

test('it stays closed below the minimum number of calls, whatever the ratio', () => {
  const { breaker, call } = setup();
  call(false);
  call(false);
  call(false);
  assert.equal(breaker.state, 'closed');
  assert.equal(breaker.capacity(), Number.POSITIVE_INFINITY);
});

test('opens on the failure ratio, pauses, half-opens after openMs, and a good probe closes it', () => {
  const { breaker, changes, call, advance } = setup();
  call(true);
  call(false);
  call(true);
  assert.equal(breaker.state, 'closed', '1 of 3 failed');
  call(false);
  assert.equal(breaker.state, 'open', '2 of 4 failed: ratio 0.5 reached');
  assert.deepEqual(
    changes.map((c) => [c.from, c.to, c.failures, c.calls]),
    [['closed', 'open', 2, 4]],
  );
  // Open: nothing goes through, and it says for how long.
  assert.equal(breaker.tryAcquire(), false);
  assert.equal(breaker.capacity(), 0);
  assert.equal(breaker.retryInMs(), 5000);
  advance(4999);
  assert.equal(breaker.tryAcquire(), false);
  assert.equal(breaker.retryInMs(), 1);
  advance(1);
  // Half-open: exactly one probe.
  assert.equal(breaker.state, 'half-open');
  assert.equal(breaker.capacity(), 1);
  assert.equal(breaker.tryAcquire(), true);
  assert.equal(breaker.tryAcquire(), false, 'a second call waits for the probe');
  assert.equal(breaker.capacity(), 0);
  breaker.success();
  assert.equal(breaker.state, 'closed');
  assert.deepEqual(
    changes.map((c) => `${c.from}>${c.to}@${c.at}`),
    ['closed>open@0', 'open>half-open@5000', 'half-open>closed@5000'],
  );
  // Closed again with a clean window: one failure does not reopen it.
  call(false);
  assert.equal(breaker.state, 'closed');
});

test('a failed probe opens it again for another openMs', () => {
  const { breaker, changes, call, advance } = setup({ minimumCalls: 2, failureRatio: 1 });
  call(false);
  call(false);
  assert.equal(breaker.state, 'open');
  advance(5000);
  call(false);
  assert.equal(breaker.state, 'open');
  assert.equal(breaker.retryInMs(), 5000);
  advance(5000);
  call(true);
  assert.equal(breaker.state, 'closed');
  assert.deepEqual(
    changes.map((c) => c.to),
    ['open', 'half-open', 'open', 'half-open', 'closed'],
  );
});

test('outcomes older than the window no longer count', () => {
  const { breaker, call, advance } = setup({ minimumCalls: 4, failureRatio: 0.75 });
  call(false);
  call(false);
  call(false);
  advance(10_000);
  call(false);
  assert.equal(breaker.state, 'closed', 'the first three fell out of the window');
  call(false);
  call(true);
  call(false);
  assert.equal(breaker.state, 'open', '3 of 4 in the window');
});

test('halfOpenCalls probes must all pass; a released permit is not an outcome', () => {
  const { breaker, call, advance } = setup({ minimumCalls: 1, failureRatio: 1, halfOpenCalls: 2 });
  call(false);
  advance(5000);
  assert.equal(breaker.capacity(), 2);
  assert.ok(breaker.tryAcquire());
  breaker.release();
  assert.equal(breaker.state, 'half-open');
  assert.equal(breaker.capacity(), 2);
  call(true);
  assert.equal(breaker.state, 'half-open', 'one of two probes');
  call(true);
  assert.equal(breaker.state, 'closed');
});

test('a late outcome of a call started before it opened is no probe', () => {
  const { breaker, call, advance } = setup({ minimumCalls: 1, failureRatio: 1 });
  assert.ok(breaker.tryAcquire(), 'a slow call starts while closed');
  call(false);
  assert.equal(breaker.state, 'open');
  advance(5000);
  assert.equal(breaker.state, 'half-open');
  breaker.success(); // the slow call answers now
  assert.equal(breaker.state, 'half-open');
  assert.equal(breaker.capacity(), 1);
});

test('invalid options are refused with EFF_INVALID_OPTIONS', () => {
  assert.throws(() => createCircuitBreaker({ failureRatio: 0 }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => createCircuitBreaker({ minimumCalls: 0 }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => createCircuitBreaker({ halfOpenCalls: 1.5 }), { code: 'EFF_INVALID_OPTIONS' });
});
