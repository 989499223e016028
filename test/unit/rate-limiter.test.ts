// The token bucket in virtual time: an injected clock, so the assertions count calls, never wall-clock durations.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRateLimiter } from '../../src/backpressure/rate-limiter.ts';
import { maxPerWindow } from '../../src/backpressure/rate-window.ts';

function virtualClock(start = 1_000_000) {
  let time = start;
  return {
    now: () => time,
    advance: (ms: number) => {
      time += ms;
    },
    sleep: async (ms: number) => {
      time += ms;
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

test('under a backlog the limiter holds its rate: perSecond per second, plus the burst once', () => {
  const clock = virtualClock();
  const limiter = createRateLimiter({ perSecond: 20, burst: 5, now: clock.now });
  const calls: number[] = [];
  // A backlog far larger than the budget: every virtual millisecond, take as many as it gives.
  for (let ms = 0; ms < 10_000; ms++) {
    while (limiter.tryTake()) calls.push(clock.now());
    clock.advance(1);
  }
  // The full bucket at 0 ms, then one token every 50 ms up to 9999 ms.
  assert.equal(calls.length, 5 + Math.floor(9999 / 50), 'the full bucket, then 20 per second for 10 s');
  assert.ok(maxPerWindow(calls, 1000) <= 20 + 5, `at most rate + burst in any second: ${maxPerWindow(calls, 1000)}`);
  // After the first burst, the steady state is exactly the rate.
  const later = calls.filter((time) => time >= calls[0]! + 2000);
  assert.ok(maxPerWindow(later, 1000) <= 21);
});

test('the default burst of 1 never lets more than perSecond + 1 through in any second', () => {
  const clock = virtualClock();
  const limiter = createRateLimiter({ perSecond: 7, now: clock.now });
  assert.equal(limiter.burst, 1);
  const calls: number[] = [];
  for (let ms = 0; ms < 5000; ms += 3) {
    while (limiter.tryTake()) calls.push(clock.now());
    clock.advance(3);
  }
  assert.ok(maxPerWindow(calls, 1000) <= 8, `busiest second: ${maxPerWindow(calls, 1000)}`);
  assert.ok(calls.length >= 35 && calls.length <= 36, `about 7/s over 5 s: ${calls.length}`);
});

test('waitMs says when the next token comes; take waits exactly that long in virtual time', async () => {
  const clock = virtualClock();
  const limiter = createRateLimiter({ perSecond: 4, burst: 2, now: clock.now, sleep: clock.sleep });
  assert.equal(limiter.available(), 2);
  assert.equal(limiter.waitMs(), 0);
  assert.ok(limiter.tryTake(2));
  assert.equal(limiter.tryTake(), false, 'empty');
  assert.equal(limiter.waitMs(), 250);
  assert.equal(limiter.waitMs(2), 500);
  const start = clock.now();
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    assert.equal(await limiter.take(), true);
    times.push(clock.now() - start);
  }
  assert.deepEqual(times, [250, 500, 750, 1000, 1250, 1500, 1750, 2000]);
});

test('take gives up (takes nothing) when its signal aborts; a clock stepping back mints no tokens', async () => {
  const clock = virtualClock();
  const limiter = createRateLimiter({ perSecond: 1, now: clock.now, sleep: async () => undefined });
  assert.ok(limiter.tryTake());
  const stop = new AbortController();
  stop.abort();
  assert.equal(await limiter.take(stop.signal), false);
  clock.advance(-10_000);
  assert.equal(limiter.tryTake(), false);
  clock.advance(10_000 + 999);
  assert.equal(limiter.tryTake(), false);
  clock.advance(1);
  assert.equal(limiter.tryTake(), true);
});

test('invalid options are refused with EFF_INVALID_OPTIONS', () => {
  assert.throws(() => createRateLimiter({ perSecond: 0 }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => createRateLimiter({ perSecond: 5, burst: 0.5 }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => createRateLimiter({ perSecond: Number.POSITIVE_INFINITY }), { code: 'EFF_INVALID_OPTIONS' });
});
