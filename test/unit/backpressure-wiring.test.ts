// pauseWhileOpen and the backpressure metrics over a breaker in virtual time (an injected clock) and stand-in
// consumers and sender. No wall-clock timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCircuitBreaker } from '../../src/backpressure/circuit-breaker.ts';
import { backpressureMetrics } from '../../src/backpressure/metrics.ts';
import { pauseWhileOpen } from '../../src/backpressure/pause-while-open.ts';
import type { Sender, SenderStats } from '../../src/effects/sender.ts';

function clockedBreaker() {
  let time = 0;
  const breaker = createCircuitBreaker({ minimumCalls: 2, failureRatio: 0.5, openMs: 1000, now: () => time });
  const trip = () => {
    for (let i = 0; i < 2; i++) {
      assert.ok(breaker.tryAcquire());
      breaker.failure();
    }
    assert.equal(breaker.state, 'open');
  };
  const probe = (ok: boolean) => {
    assert.ok(breaker.tryAcquire(), `a probe permit (${breaker.state})`);
    if (ok) breaker.success();
    else breaker.failure();
  };
  const advance = (ms: number) => {
    time += ms;
  };
  return { breaker, trip, probe, advance };
}

function fakeConsumer() {
  const calls: string[] = [];
  let paused = false;
  return {
    calls,
    pause() {
      paused = true;
      calls.push('pause');
    },
    resume() {
      paused = false;
      calls.push('resume');
    },
    get paused() {
      return paused;
    },
  };
}

test('pauseWhileOpen pauses on open, resumes on half-open and closed, and pauses again when a probe fails', () => {
  const { breaker, trip, probe, advance } = clockedBreaker();
  const consumer = fakeConsumer();
  const seen: boolean[] = [];
  const stop = pauseWhileOpen(breaker, consumer, { onChange: ({ paused }) => seen.push(paused) });
  assert.equal(consumer.paused, false);
  trip();
  assert.equal(consumer.paused, true);
  advance(1000);
  assert.equal(breaker.state, 'half-open');
  assert.equal(consumer.paused, false, 'resumed when half-open');
  probe(false);
  assert.equal(consumer.paused, true, 'paused again: the probe failed');
  advance(1000);
  probe(true);
  assert.equal(breaker.state, 'closed');
  assert.equal(consumer.paused, false);
  assert.deepEqual(consumer.calls, ['pause', 'resume', 'pause', 'resume']);
  assert.deepEqual(seen, [true, false, true, false]);
  stop();
  trip();
  assert.equal(consumer.paused, false, 'no longer driven after unsubscribing');
});

test('pauseWhileOpen applies at once to an open breaker, and unsubscribing resumes what it paused', () => {
  const { breaker, trip } = clockedBreaker();
  trip();
  const consumers = [fakeConsumer(), fakeConsumer()];
  const stop = pauseWhileOpen(breaker, consumers);
  assert.ok(consumers.every((c) => c.paused));
  stop();
  stop();
  assert.ok(consumers.every((c) => !c.paused));
  assert.deepEqual(consumers[0]!.calls, ['pause', 'resume']);
});

test('a consumer feeding two providers stays paused while either breaker is open', () => {
  const email = clockedBreaker();
  const sms = clockedBreaker();
  const consumer = fakeConsumer();
  pauseWhileOpen(email.breaker, consumer);
  pauseWhileOpen(sms.breaker, consumer);
  email.trip();
  sms.trip();
  email.advance(1000);
  email.probe(true);
  assert.equal(email.breaker.state, 'closed');
  assert.equal(consumer.paused, true, 'the SMS breaker is still open');
  sms.advance(1000);
  assert.equal(sms.breaker.state, 'half-open');
  assert.equal(consumer.paused, false);
  assert.deepEqual(consumer.calls, ['pause', 'resume']);
});

test('metrics: breaker state and openings, sender counters, paused consumers in one snapshot', async () => {
  const { breaker, trip, probe, advance } = clockedBreaker();
  const stats: SenderStats = {
    calls: 12,
    done: 7,
    retried: 4,
    dead: 1,
    timeouts: 2,
    settledByLookup: 0,
    unrecorded: 0,
    inFlight: 3,
  };
  const sender = {
    stats,
    breaker,
    limiter: undefined,
    get paused() {
      return breaker.state === 'open';
    },
  } as unknown as Sender;
  const consumers = [fakeConsumer(), fakeConsumer()];
  const metrics = backpressureMetrics({ sender, consumers });
  pauseWhileOpen(breaker, consumers[0]!);
  assert.deepEqual(await metrics.metrics(), {
    breaker_state: 'closed',
    breaker_opened_total: 0,
    sender_calls_total: 12,
    sender_done_total: 7,
    sender_retried_total: 4,
    sender_dead_total: 1,
    sender_timeouts_total: 2,
    sender_in_flight: 3,
    sender_paused: false,
    consumer_paused: false,
    consumers_paused: 0,
    consumer_lag: null,
    outbox_refused: null,
  });
  trip();
  let snapshot = await metrics.metrics();
  assert.equal(snapshot.breaker_state, 'open');
  assert.equal(snapshot.breaker_opened_total, 1);
  assert.equal(snapshot.sender_paused, true);
  assert.equal(snapshot.consumer_paused, true);
  assert.equal(snapshot.consumers_paused, 1);
  advance(1000);
  probe(false);
  advance(1000);
  probe(true);
  snapshot = await metrics.metrics();
  assert.equal(snapshot.breaker_state, 'closed');
  assert.equal(snapshot.breaker_opened_total, 2);
  assert.equal(snapshot.consumer_paused, false);
  metrics.close();
  trip();
  assert.equal((await metrics.metrics()).breaker_opened_total, 2, 'closed metrics stop counting');
});
