// Issue 11 item 2: the breaker's window must stay bounded (every success used to be kept until a failure pruned the
// list one shift() at a time: 400k successes, then one failure, froze the event loop for seconds), and a late outcome
// must never be taken as the half-open probe's, whatever order the two answers come in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCircuitBreaker } from '../../src/backpressure/circuit-breaker.ts';

function clocked(overrides: Parameters<typeof createCircuitBreaker>[0] = {}) {
  let time = 0;
  const breaker = createCircuitBreaker({
    failureRatio: 0.5,
    windowMs: 10_000,
    minimumCalls: 4,
    openMs: 5000,
    now: () => time,
    ...overrides,
  });
  const advance = (ms: number) => {
    time += ms;
  };
  return { breaker, advance };
}

test('circuit breaker: the window holds a bounded number of entries however many successes it sees', () => {
  const { breaker, advance } = clocked();
  for (let i = 0; i < 300_000; i++) {
    assert.ok(breaker.tryAcquire());
    breaker.success();
    if (i % 3 === 0) advance(1);
  }
  const entries = breaker.windowEntries();
  assert.ok(entries <= 1001, `window entries: ${entries}`);
  // naive twin of the bound: the window still counts (a burst of failures in it trips the breaker)
  for (let i = 0; i < 200_000; i++) {
    breaker.tryAcquire();
    breaker.failure();
  }
  assert.equal(breaker.state, 'open');
});

test('circuit breaker: outcomes that left the window are forgotten without a failure to prune them', () => {
  const { breaker, advance } = clocked();
  for (let i = 0; i < 1000; i++) {
    assert.ok(breaker.tryAcquire());
    breaker.success();
    advance(100);
  }
  assert.ok(breaker.windowEntries() <= 101, `window entries: ${breaker.windowEntries()}`);
});

test('circuit breaker: a late call answering after the probe failed does not close it (permits)', () => {
  const { breaker, advance } = clocked({ minimumCalls: 1, failureRatio: 1 });
  const slow = breaker.acquire();
  assert.ok(slow, 'a slow call starts while closed');
  const failing = breaker.acquire();
  failing?.failure();
  assert.equal(breaker.state, 'open');
  advance(5000);
  const probe = breaker.acquire();
  assert.ok(probe?.probe, 'the half-open probe');
  probe.failure(); // the probe fails first ...
  assert.equal(breaker.state, 'open');
  advance(5000);
  const second = breaker.acquire();
  assert.ok(second?.probe);
  slow.success(); // ... then the slow call started while closed answers
  assert.equal(breaker.state, 'half-open', 'the late success is not the probe');
  second.failure();
  assert.equal(breaker.state, 'open', 'the real probe decides');
});

test('circuit breaker: a late success arriving while the probe is out is not the probe (anonymous API)', () => {
  const { breaker, advance } = clocked({ minimumCalls: 1, failureRatio: 1 });
  assert.ok(breaker.tryAcquire(), 'a slow call starts while closed');
  assert.ok(breaker.tryAcquire());
  breaker.failure();
  assert.equal(breaker.state, 'open');
  advance(5000);
  assert.ok(breaker.tryAcquire(), 'the probe');
  breaker.success(); // the slow call answers first
  assert.equal(breaker.state, 'half-open');
  breaker.failure(); // the probe
  assert.equal(breaker.state, 'open');
});

test('circuit breaker: a permit settles once; a second report is ignored', () => {
  const { breaker, advance } = clocked({ minimumCalls: 1, failureRatio: 1, halfOpenCalls: 2 });
  breaker.acquire()?.failure();
  advance(5000);
  const probe = breaker.acquire();
  probe?.success();
  probe?.success();
  assert.equal(breaker.state, 'half-open', 'one probe of two passed, reported twice');
});
