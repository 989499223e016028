// Issue 30 items 1 and 2: the console in a real browser (headless Chromium driven by playwright-core), mounted under
// /ops in the application's own HTTP server on an embedded PGlite (which no other process may open). Load, filter,
// open a letter whose payload and header carry markup (shown as text, never run), redrive a failure group into the
// embedded log and watch it finish, be refused without the operator role.
// CONSOLE_SCREENSHOTS=docs/images writes the README's screenshots.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { findChromium, launchChromium } from '../../scenarios/report/screenshot.ts';
import { createConsole } from '../../src/console/console.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { hostileHeader, hostilePayload, seedConsole } from '../support/console-seed.ts';

const shots = process.env.CONSOLE_SCREENSHOTS;

async function shoot(page: Page, name: string, selector?: string): Promise<void> {
  if (!shots) return;
  const path = join(shots, `console-${name}.png`);
  await (selector ? page.locator(selector).screenshot({ path }) : page.screenshot({ path }));
}

// biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are asserted field by field
const json = async (response: Response | Promise<Response>): Promise<any> => (await response).json();

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
  // the application: PGlite in its process, its own HTTP server, the console mounted under /ops
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'effectively';
  await migrate(db, { schema });
  const seeded = await seedConsole(db, schema);
  const producer = postgresTransport({ db, schema }).producer({ clientId: 'later' });
  await producer.send([{ topic: seeded.topic, key: 'order-9', value: Buffer.from('{}'), headers: {} }]);
  await producer.close(); // one record waits behind the group: lag 1, with its age
  const ops = createConsole({
    db,
    basePath: '/ops',
    tokens: { operator: 'operator-secret-123', reader: 'reader-secret-12345' },
  });
  const app = createServer((request, response) => {
    if (request.url?.startsWith('/ops')) return void ops.handle(request, response);
    response.end('the application');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    await ops.close();
    await new Promise((resolve) => app.close(resolve));
  });
  const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  assert.equal(await (await fetch(`${base}/`)).text(), 'the application');
  assert.equal(ops.links?.operator, '/ops/?token=operator-secret-123', 'a path on your server when you mount it');
  const login = await fetch(base + ops.links!.reader, { redirect: 'manual' });
  assert.equal(login.headers.get('location'), '/ops/');
  assert.match(login.headers.get('set-cookie') ?? '', /; Path=\/ops$/);
  const auth = { authorization: 'Bearer reader-secret-12345' };
  const health = await json(fetch(`${base}/ops/api/health`, { headers: auth }));
  assert.equal(health.transport, 'postgres', 'an embedded Db implies its own log');
  assert.equal(health.lag[0].lag, 1);
  assert.ok(health.lag[0].lagSeconds >= 0, 'seconds known on the embedded log');

  const browser = await launchChromium();
  t.after(() => browser.close());

  const operator = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
  await operator.goto(base + ops.links!.operator);
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
  await operator.waitForFunction("[...document.querySelectorAll('img')].every((img) => img.complete)");
  await operator.waitForTimeout(200); // its error event, had a handler been allowed to run
  assert.deepEqual(
    await ranOrBuilt(operator),
    { ran: null, images: 1, scripts: 0 },
    "the check sees an element built of the markup; the console's CSP still keeps its handler from running",
  );
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
  assert.match((await operator.locator('#jobs tr.job-done').textContent()) ?? '', /postgres: the embedded log/);
  assert.match(result ?? '', /later event\(s\) of the same key were already applied/);
  assert.equal(await operator.locator('#jobs tr.job-done progress').getAttribute('value'), '2');
  await shoot(operator, 'jobs');

  // a reader sees the same page and is refused by the server when acting
  const reader = await (await browser.newContext({ viewport: { width: 1200, height: 720 } })).newPage();
  await reader.goto(base + ops.links!.reader);
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
