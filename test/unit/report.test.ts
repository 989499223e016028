// The scenario report: one self-contained HTML file (no script, nothing fetched), data shown as text and never run,
// one SVG per chart; and, where Chromium is installed (always under CI=true), the charts drawn at a real size.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { findChromium, launchChromium } from '../../scenarios/report/screenshot.ts';
import { createTimeline } from '../../scenarios/report/timeline.ts';
import { writeReport } from '../../scenarios/report/write.ts';

const hostile = '<img src=x onerror=alert(1)>';
let dir = '';
let path = '';
let html = '';

/** Five seconds in virtual time: 100 events/s, lag, a breaker opening, a dead letter, provider calls at a limit. */
function run(variant: 'naive' | 'effectively') {
  let clock = Date.parse('2026-12-04T04:00:00Z');
  const timeline = createTimeline({ now: () => clock });
  timeline.limit('provider calls', 20);
  for (let ms = 0; ms < 5000; ms += 100, clock += 100) {
    timeline.count('applied', 10);
    timeline.count('provider calls', variant === 'naive' ? 5 : 2);
    if (ms % 500 === 0) timeline.gauge('lag', ms / 10);
    // A known counter's name recorded as a gauge (a count read from tables) is drawn as its line.
    if (ms % 500 === 0 && variant === 'effectively') timeline.gauge('dead letters', ms >= 4000 ? 1 : 0);
    if (ms === 2000) timeline.mark(hostile);
    if (variant === 'effectively') timeline.gauge('breaker', ms < 1000 ? 'closed' : ms < 3000 ? 'open' : hostile);
  }
  if (variant === 'naive') timeline.count('dead letters', 3);
  clock += 100;
  return timeline;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'report-'));
  const naive = run('naive');
  const effectively = run('effectively');
  await naive.stop();
  await effectively.stop();
  path = await writeReport({
    scenario: 'retry-storm',
    auditLine: `retry-storm: orders=500 duplicates=0 lost=2 ${hostile}`,
    variants: [
      { name: 'effectively', timeline: effectively, facts: { [hostile]: 1 } },
      { name: 'naive', timeline: naive, auditLine: hostile },
    ],
    facts: { orders: 500, note: hostile },
    dir,
  });
  html = await readFile(path, 'utf8');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the report is one file named after the scenario and its start, needing nothing from elsewhere', () => {
  assert.equal(basename(path), 'retry-storm-2026-12-04T04-00-00Z.html');
  assert.doesNotMatch(html, /<script|<link|<iframe|@import|url\(/i);
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
});

test('strings from a run are shown as text, never as markup', () => {
  assert.ok(!html.includes(hostile), 'the hostile string appears unescaped');
  assert.doesNotMatch(html, /<img/i);
  // In the audit line, a fact's key and value, a variant's audit line, a mark's label and a breaker state.
  const escaped = '&lt;img src=x onerror=alert(1)&gt;';
  assert.ok(html.split(escaped).length - 1 >= 6, 'the hostile string shown escaped in each place it was given');
});

test('one SVG per chart: a row per metric, a chart per variant, counters as rates', () => {
  // applied, lag, dead letters, breaker, provider calls; naive and effectively each.
  assert.equal(html.match(/<svg /g)?.length, 5 * 2);
  assert.ok(html.indexOf('>naive<') < html.indexOf('>effectively<'), 'naive on the left');
  assert.match(html, /peak 100\/s · total 500</, '10 events per 100 ms are 100 per second');
  assert.match(html, /limit 20\/s/);
  assert.match(html, /open 1 time, 2\.0 s in all/);
  assert.equal(html.match(/not recorded in this run/g)?.length, 1, "the naive side's breaker only");
  assert.match(html, /total 3<\/figcaption>.*peak 1 · at the end 1</s, 'dead letters: a counter and a gauge');
  assert.match(html, /<b class="good">duplicates=0<\/b> <b class="bad">lost=2<\/b>/, 'what must not happen, marked');
});

const chromium = findChromium();
test(
  'in Chromium every chart is drawn at a real size and nothing from the data runs',
  {
    skip: !chromium && process.env.CI !== 'true' && 'chromium is not installed (apt-get install -y chromium)',
  },
  async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1240, height: 900 } });
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(pathToFileURL(path).href);
      const sizes = await page.$$eval('svg', (svgs) => svgs.map((svg) => svg.getBoundingClientRect()));
      assert.equal(sizes.length, 10);
      for (const size of sizes)
        assert.ok(size.width > 300 && size.height > 50, `an SVG of ${size.width}×${size.height}`);
      assert.equal(await page.locator('img').count(), 0);
      assert.ok((await page.locator('.audit').first().textContent())?.includes(hostile), 'shown as text');
      assert.deepEqual(dialogs, []);
    } finally {
      await browser.close();
    }
  },
);

test('sampleEvery takes one sample at a time; stop waits for the one in flight, then takes the last', async () => {
  const timeline = createTimeline();
  let running = 0;
  let most = 0;
  let calls = 0;
  let third: () => void = () => {};
  const thirdCall = new Promise<void>((resolve) => {
    third = resolve;
  });
  timeline.sampleEvery(1, async () => {
    running += 1;
    most = Math.max(most, running);
    calls += 1;
    if (calls === 3) third();
    await new Promise((resolve) => setTimeout(resolve, 5)); // slower than the interval
    timeline.gauge('lag', calls);
    running -= 1;
  });
  // The sampler's timer does not hold the process open (a forgotten stop() must not keep a run alive): this does.
  const open = setInterval(() => {}, 1000);
  await thirdCall;
  clearInterval(open);
  await timeline.stop();
  assert.equal(most, 1, 'two samples at once');
  assert.equal(running, 0, 'stop returned with a sample in flight');
  const lag = timeline.data().gauges.get('lag')!;
  assert.equal(lag.at(-1)?.value, calls, "the last sample's value is recorded");
  timeline.count('applied');
  assert.equal(timeline.data().counters.size, 0, 'a count after stop is dropped');
});
