// Issue 30 item 2: the console in a real browser (headless Chromium driven by playwright-core), on the PostgreSQL
// server (the embedded mount: console-embedded.test.ts). Load, filter, open a letter whose payload and header carry
// markup (shown as text, never run), redrive a failure group and watch it finish, be refused without the operator role.
// CONSOLE_SCREENSHOTS=docs/images writes the README's screenshots.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, launchChromium } from '../../scenarios/report/screenshot.ts';
import { createConsole } from '../../src/console/console.ts';
import { hostileHeader, hostilePayload, seedConsole } from '../support/console-seed.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const shots = process.env.CONSOLE_SCREENSHOTS;

async function shoot(page: Page, name: string, selector?: string): Promise<void> {
  if (!shots) return;
  const path = join(shots, `console-${name}.png`);
  await (selector ? page.locator(selector).screenshot({ path }) : page.screenshot({ path }));
}

/** What the page did with the record's markup: elements it made of it, and whether a handler of it ran. */
const ranOrBuilt = (page: Page) =>
  page.evaluate<{ ran: number | null; images: number; scripts: number }>(`({
    ran: window.__xss ?? null,
    images: document.querySelectorAll('img').length,
    scripts: [...document.querySelectorAll('script')].filter((s) => s.textContent.includes('__xss')).length,
  })`);

/** The naive twin's rendering: `html` put into the page as markup (what the console never does). */
const asMarkup = (html: string) => `(() => {
  const naive = document.createElement('div');
  naive.innerHTML = ${JSON.stringify(html)};
  document.body.append(naive);
})()`;

test('console in Chromium: load, filter, markup as text, redrive a group, refused as a reader', async (t) => {
  if (!findChromium()) {
    assert.notEqual(
      process.env.CI,
      'true',
      'CI installs chromium (scripts/install.sh): the browser test must run there',
    );
    return t.skip('no chromium (apt-get install -y chromium)');
  }
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await seedConsole(db, schema);
  const server = createConsole({
    db,
    schema,
    transport: 'postgres',
    tokens: { operator: 'operator-secret-123', reader: 'reader-secret-12345' },
  });
  await server.start();
  t.after(() => server.close());
  const browser = await launchChromium();
  t.after(() => browser.close());

  const operator = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
  await operator.goto(server.links!.operator);
  assert.equal(new URL(operator.url()).search, '', 'the token left the address bar');
  await operator.locator('#who').filter({ hasText: 'operator' }).waitFor();
  await operator.locator('.card', { hasText: 'Dead letters' }).locator('.big', { hasText: '3' }).waitFor();
  await shoot(operator, 'health');

  // failure groups: two causes
  await operator.click('button[data-view=failures]');
  await operator.locator('#failures tbody tr').nth(1).waitFor();
  assert.equal(await operator.locator('#failures tbody tr').count(), 2);
  await shoot(operator, 'failures');

  // dead letters: the payload search, then the letter whole, its markup as text
  await operator.click('button[data-view=letters]');
  await operator.locator('#letters tbody tr').nth(2).waitFor();
  await operator.fill('#letters-form input[name=q]', '<script>');
  await operator.click('#letters-form button[type=submit]');
  await operator.locator('#letters-count', { hasText: /^1 letters$/ }).waitFor();
  await operator.click('#letters tbody tr.letter');
  await operator.locator('#payload').waitFor();
  assert.equal(await operator.locator('#payload').textContent(), hostilePayload);
  await operator.fill('#letters-form input[name=q]', '');
  await operator.click('#letters-form button[type=submit]');
  await operator.locator('#letters-count', { hasText: /^3 letters$/ }).waitFor();
  await operator.click('#letters tbody tr.letter >> nth=0'); // newest first: the one with the header
  await operator.locator('.header-value', { hasText: 'onerror' }).waitFor();
  assert.equal(await operator.locator('.header-value', { hasText: 'onerror' }).textContent(), hostileHeader);
  assert.deepEqual(await ranOrBuilt(operator), { ran: null, images: 0, scripts: 0 }, 'shown, never built or run');
  await shoot(operator, 'letter', '#detail');

  // the naive twin: the same text put in as HTML builds the element, and without the console's CSP runs it
  await operator.evaluate(asMarkup(hostileHeader));
  assert.equal((await ranOrBuilt(operator)).images, 1, 'the check sees an element built of the markup');
  const blank = await browser.newPage();
  await blank.setContent('<div id="x"></div>');
  await blank.evaluate(asMarkup(hostileHeader));
  await blank.waitForFunction('window.__xss === 2');
  await blank.close();

  // redrive the largest group; the job's progress and result, with the warning for order-1
  await operator.reload();
  await operator.click('button[data-view=failures]');
  await operator.locator('#failures tbody tr').nth(1).waitFor();
  await operator.locator('#failures tbody tr').first().locator('button.redrive-group').click();
  await operator.locator('#jobs tr.job-done').waitFor();
  const result = await operator.locator('#jobs tr.job-done .result').textContent();
  assert.match(result ?? '', /^done: 2 redriven/);
  assert.match(result ?? '', /later event\(s\) of the same key were already applied/);
  assert.equal(await operator.locator('#jobs tr.job-done progress').getAttribute('value'), '2');
  await shoot(operator, 'jobs');

  // a reader sees the same page and is refused by the server when acting
  const reader = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
  await reader.goto(server.links!.reader);
  await reader.locator('#who').filter({ hasText: 'reader' }).waitFor();
  await reader.click('button[data-view=failures]');
  await reader.locator('#failures tbody tr').first().waitFor();
  await reader.locator('#failures tbody tr').first().locator('button.redrive-group').click();
  await reader.locator('#message.error', { hasText: 'refused: this needs the operator role' }).waitFor();
  const { rows } = await db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM ${schema}.dead_letters GROUP BY status ORDER BY status`,
  );
  assert.deepEqual(
    rows.map((r) => [r.status, r.n]),
    [
      ['dead', 1],
      ['redriven', 2],
    ],
    "the reader's click changed nothing",
  );
});
