// A small time-series recorder for a scenario run, turned into a report by write.ts.
//
//   const timeline = createTimeline();
//   timeline.count('applied');                       // one event applied (counters become per-second rates)
//   timeline.count('provider calls', 3);             // three calls to the provider
//   timeline.limit('provider calls', 20);            // the rate limit, drawn as a dashed line on that chart
//   timeline.gauge('breaker', sender.breaker.state); // a state (a string): drawn as a coloured band
//   timeline.sampleEvery(500, async () => timeline.gauge('lag', (await metrics.metrics()).consumer_lag ?? 0));
//   timeline.mark('crash');                          // a vertical marker at this moment
//   await timeline.stop();                           // ends the sampling; the run's end is now
//
// Names the report knows (title, unit, order): 'applied' (events applied), 'lag' (consumer lag), 'retries',
// 'dead letters' (drawn as a running total), 'breaker' ('closed' | 'half-open' | 'open'), 'provider calls'. Any other
// name gets its own chart: a counter as a rate, a numeric gauge as a line, a string gauge as a band.
// Counters are kept in 100 ms buckets, so a million counts cost no more than a few thousand numbers.

export type GaugeValue = number | string;

export interface TimelineData {
  /** Epoch ms when the timeline was created; every time below is ms since then. */
  startedAt: number;
  /** ms since startedAt when stop() was called (or when the data was read, if still running). */
  endedMs: number;
  /** Counter name → (100 ms bucket index → count). */
  counters: Map<string, Map<number, number>>;
  /** Gauge name → samples in time order; a string gauge keeps only its changes. */
  gauges: Map<string, { t: number; value: GaugeValue }[]>;
  limits: Map<string, number>;
  marks: { t: number; label: string }[];
}

export interface Timeline {
  count(name: string, n?: number): void;
  gauge(name: string, value: GaugeValue): void;
  /** A limit for a counter's rate (per second), e.g. the provider's rate limit. */
  limit(name: string, perSecond: number): void;
  mark(label: string): void;
  /** Calls `fn` every `ms` (never two at once; a throw skips that sample) until stop() or the returned function. */
  sampleEvery(ms: number, fn: () => unknown): () => void;
  /** Stops the sampling, waits for a sample in flight and takes one last sample of each sampler. */
  stop(): Promise<void>;
  data(): TimelineData;
}

export const bucketMs = 100;

export interface TimelineOptions {
  /** The clock, epoch ms (default Date.now); a synthetic timeline can drive its own. */
  now?: () => number;
}

export function createTimeline(options: TimelineOptions = {}): Timeline {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const since = () => Math.max(0, now() - startedAt);
  let endedMs: number | undefined;
  const counters = new Map<string, Map<number, number>>();
  const gauges = new Map<string, { t: number; value: GaugeValue }[]>();
  const limits = new Map<string, number>();
  const marks: { t: number; label: string }[] = [];
  const samplers = new Set<Sampler>();

  const timeline: Timeline = {
    count(name, n = 1) {
      if (endedMs !== undefined || !Number.isFinite(n)) return;
      let buckets = counters.get(name);
      if (!buckets) {
        buckets = new Map();
        counters.set(name, buckets);
      }
      const bucket = Math.floor(since() / bucketMs);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + n);
    },
    gauge(name, value) {
      if (endedMs !== undefined || (typeof value === 'number' && !Number.isFinite(value))) return;
      let samples = gauges.get(name);
      if (!samples) {
        samples = [];
        gauges.set(name, samples);
      }
      const last = samples.at(-1);
      if (typeof value === 'string' && last?.value === value) return;
      samples.push({ t: since(), value });
    },
    limit(name, perSecond) {
      limits.set(name, perSecond);
    },
    mark(label) {
      if (endedMs === undefined) marks.push({ t: since(), label });
    },
    sampleEvery(ms, fn) {
      const sampler = new Sampler(ms, fn);
      samplers.add(sampler);
      return () => {
        sampler.cancel();
        samplers.delete(sampler);
      };
    },
    async stop() {
      if (endedMs !== undefined) return;
      const running = [...samplers];
      samplers.clear();
      await Promise.all(running.map((sampler) => sampler.finish()));
      endedMs = since();
    },
    data() {
      return { startedAt, endedMs: endedMs ?? since(), counters, gauges, limits, marks };
    },
  };
  return timeline;
}

/** Polls one function on a timer, one call at a time. */
class Sampler {
  private readonly timer: NodeJS.Timeout;
  private inFlight: Promise<void> | undefined;

  constructor(
    ms: number,
    private readonly fn: () => unknown,
  ) {
    this.timer = setInterval(() => {
      this.inFlight ??= this.take().finally(() => {
        this.inFlight = undefined;
      });
    }, ms);
    this.timer.unref();
  }

  private async take(): Promise<void> {
    try {
      await this.fn();
    } catch {
      // A failed sample leaves a gap in the chart; the run itself goes on.
    }
  }

  cancel(): void {
    clearInterval(this.timer);
  }

  /** Cancels the timer, waits for a call in flight, then takes the last sample. */
  async finish(): Promise<void> {
    this.cancel();
    await this.inFlight;
    await this.take();
  }
}
