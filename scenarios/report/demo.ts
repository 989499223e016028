// A report from a synthetic run, to look at the report without running a scenario (and for the README's picture):
//   node --import tsx scenarios/report/demo.ts [dir]        prints the report's path
// The numbers come from a small simulation in virtual time of the retry-storm story: orders at 30/s for 30 s, the
// e-mail provider down for the first 12 s, its limit 20 calls/s, a consumer crash at 24 s, one poison order. The
// naive side has no rate limiter and no breaker: it hammers the provider, retries into 429s and gives effects up.
import { createTimeline, type Timeline } from './timeline.ts';
import { writeReport } from './write.ts';

const dt = 0.1;
const limit = 20;
const outageS = 12;
const crashS = 24;

interface World {
  t: number;
  published: number;
  applied: number;
  sent: number;
  pending: number;
  dead: number;
  duplicates: number;
}

/** A small deterministic generator: the picture is the same at every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function simulate(naive: boolean, startedAt: number): { timeline: Timeline; world: World } {
  let clock = startedAt;
  const timeline = createTimeline({ now: () => clock });
  const rnd = random(naive ? 7 : 11);
  const orders = random(3); // the same orders on both sides
  const w: World = { t: 0, published: 0, applied: 0, sent: 0, pending: 0, dead: 0, duplicates: 0 };
  let breaker: 'closed' | 'open' | 'half-open' = 'closed';
  let openUntil = 0;
  let failures = 0;
  if (!naive) timeline.gauge('breaker', breaker);
  timeline.limit('provider calls', limit);
  for (let step = 0; w.t < 60; step++) {
    w.t = step * dt;
    clock = startedAt + w.t * 1000;
    if (Math.abs(w.t - outageS) < dt / 2) timeline.mark('provider back');
    if (Math.abs(w.t - crashS) < dt / 2) timeline.mark('consumer crash');
    if (Math.abs(w.t - 20) < dt / 2) timeline.mark('poison order');
    if (w.t < 30) w.published += 30 * dt * (0.8 + 0.4 * orders());
    const down = w.t >= crashS && w.t < crashS + 3;
    const paused = !naive && breaker === 'open';
    if (!down && !paused) {
      const n = Math.min(Math.floor(w.published - w.applied), Math.round(250 * dt * (0.7 + 0.6 * rnd())));
      const replay = naive && Math.abs(w.t - crashS - 3) < dt / 2 ? 60 : 0;
      if (n + replay > 0) timeline.count('applied', n + replay);
      w.applied += n;
      w.duplicates += replay;
      w.pending += n + replay;
      if (Math.abs(w.t - 20) < dt / 2 && !naive) {
        timeline.count('dead letters');
        w.pending -= 1;
        w.dead += 1;
      }
    }
    if (step % 5 === 0) timeline.gauge('lag', Math.max(0, Math.floor(w.published - w.applied)));
    const providerUp = w.t >= outageS;
    if (naive) {
      // No limiter, no breaker: eight workers call as fast as answers come, failures retried at once.
      const calls = Math.min(w.pending, Math.round(140 * dt * (0.8 + 0.4 * rnd())));
      if (calls === 0) continue;
      timeline.count('provider calls', calls);
      const ok = providerUp ? Math.min(calls, Math.round(limit * dt * 1.1)) : 0;
      timeline.count('retries', calls - ok);
      w.sent += ok;
      w.pending -= ok;
      const given = Math.round((calls - ok) * 0.04 * rnd());
      if (given > 0) timeline.count('dead letters', given);
      w.pending -= given;
      w.dead += given;
    } else {
      if (breaker === 'open' && w.t >= openUntil) {
        breaker = 'half-open';
        timeline.gauge('breaker', breaker);
      }
      const budget = breaker === 'half-open' ? 1 : Math.round(limit * dt * (0.85 + 0.3 * rnd()));
      const calls = breaker === 'open' ? 0 : Math.min(w.pending, budget);
      if (calls === 0) continue;
      timeline.count('provider calls', calls);
      if (providerUp) {
        w.sent += calls;
        w.pending -= calls;
        failures = 0;
        if (breaker === 'half-open') breaker = 'closed';
      } else {
        timeline.count('retries', calls);
        failures += calls;
        if (failures >= 10 || breaker === 'half-open') {
          breaker = 'open';
          openUntil = w.t + 1;
        }
      }
      timeline.gauge('breaker', breaker);
    }
  }
  return { timeline, world: w };
}

const dir = process.argv[2] ?? 'reports';
const startedAt = Date.parse('2026-12-04T04:00:00Z');
const naive = simulate(true, startedAt);
const effectively = simulate(false, startedAt);
await naive.timeline.stop();
await effectively.timeline.stop();
const audit = (name: string, w: World) =>
  `${name}: orders=${Math.floor(w.published)} emails=${w.sent} duplicates=${w.duplicates} dead=${w.dead} ` +
  `lost=${Math.max(0, Math.floor(w.published) - (w.sent - w.duplicates) - (name === 'naive' ? 0 : w.dead))}`;
const path = await writeReport({
  scenario: 'retry-storm (synthetic)',
  auditLine: audit('retry-storm', effectively.world),
  startedAt,
  variants: [
    { name: 'naive', timeline: naive.timeline, auditLine: audit('naive', naive.world) },
    { name: 'effectively', timeline: effectively.timeline, auditLine: audit('effectively', effectively.world) },
  ],
  facts: {
    orders: Math.floor(effectively.world.published),
    'provider limit': `${limit} calls/s`,
    outage: `${outageS} s`,
  },
  dir,
});
console.log(path);
