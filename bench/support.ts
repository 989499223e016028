// Shared pieces of the benchmarks: preloading topics, timing, percentiles, memory sampling.
import { type ContentMode, encodeEventAs } from '../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../src/envelope/event.ts';
import { sleep } from '../src/observability/sleep.ts';
import type { Producer } from '../src/transport/port.ts';

export const payloadPadding = 'x'.repeat(900);

/** An OrderConfirmed of about 1 KB (headers included). */
export function benchEvent(topic: string, n: number) {
  return createEvent({
    topic,
    type: 'bench.order.confirmed',
    source: '/bench',
    key: `order-${n}`,
    data: { orderNo: n, amount: n % 997, note: payloadPadding },
  });
}

/** Writes `events` bench events to `topic` in the given CloudEvents content mode (binary, the library's default). */
export async function preload(
  producer: Producer,
  topic: string,
  events: number,
  mode: ContentMode = 'binary',
  chunk = 5000,
): Promise<void> {
  for (let from = 0; from < events; from += chunk) {
    const records = [];
    for (let n = from; n < Math.min(from + chunk, events); n++) records.push(encodeEventAs(benchEvent(topic, n), mode));
    await producer.send(records);
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Samples this process's RSS (and the JavaScript heap's share of it) every `everyMs` until stopped. */
export function rssSampler(everyMs = 200) {
  const mb = (bytes: number) => bytes / 1024 / 1024;
  const start = mb(process.memoryUsage().rss);
  let peak = start;
  let heapAtPeak = mb(process.memoryUsage().heapTotal);
  const sample = () => {
    const { rss, heapTotal } = process.memoryUsage();
    if (mb(rss) > peak) {
      peak = mb(rss);
      heapAtPeak = mb(heapTotal);
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const end = mb(process.memoryUsage().rss);
      return {
        start: Math.round(start),
        peak: Math.round(peak),
        end: Math.round(end),
        heap_at_peak: Math.round(heapAtPeak),
      };
    },
  };
}

/** Resolves when `done()` turns true, polling every 20 ms, or rejects after `timeoutMs`. */
export async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

export interface Run {
  events: number;
  seconds: number;
  eps: number;
  /** This process's CPU time (all threads: the client's librdkafka threads too) per 1000 records, in ms. */
  cpu_ms_per_1000: number;
}

/** Times from the first batch to the `events`-th record: group joins are not throughput. */
export function clock(events: number) {
  let first = 0;
  let cpu = process.cpuUsage();
  let seen = 0;
  return {
    add(n: number) {
      if (first === 0) {
        first = performance.now();
        cpu = process.cpuUsage();
      }
      seen += n;
    },
    get done() {
      return seen >= events;
    },
    result(): Run {
      const seconds = (performance.now() - first) / 1000;
      const used = process.cpuUsage(cpu);
      return {
        events: seen,
        seconds: round(seconds),
        eps: Math.round(seen / seconds),
        cpu_ms_per_1000: round((used.user + used.system) / seen),
      };
    },
  };
}

/**
 * Offers `total` bench events to `topic` at `rate` events/s, in ticks of 10 ms, numbered from `from` on: `commit` gets
 * each tick's events (a writer's transaction) and the next tick waits for its due time, not for a late one's.
 */
export async function offerAtRate(
  topic: string,
  rate: number,
  total: number,
  from: number,
  commit: (batch: Event[]) => Promise<void>,
): Promise<void> {
  const tickMs = 10;
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const start = performance.now();
  let sent = 0;
  for (let tick = 0; sent < total; tick++) {
    const due = start + tick * tickMs;
    if (due > performance.now()) await sleep(due - performance.now());
    const batch: Event[] = [];
    for (let i = 0; i < perTick && sent < total; i++, sent++) batch.push(benchEvent(topic, from + sent));
    await commit(batch);
  }
}
