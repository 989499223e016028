// The saga step on the real PostgreSQL (embedded log): a show of 2 seats, 3 orders of 1 seat. Two are held, one is
// refused; inventory's SeatsRefused makes the order service cancel it (reason `sold-out`), so payment refunds it once
// and notification sends its cancellation, while inventory, applying that cancel, gives back no seat it never held.
// Naive twin: the order service without its SeatsRefused consumer: the refused customer stays charged, never refunded.
// An order for a show inventory does not sell takes the same path (it was a dead letter, the customer charged).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { startBoxoffice } from '../../examples/boxoffice/system.ts';
import { startEmailProvider } from '../../examples/email-provider/server.ts';
import { startPaymentProvider } from '../../examples/payment-provider/server.ts';
import { pgDb, postgresTransport, silentLogger } from '../../src/index.ts';
import { eventually, randomName } from '../support/fixtures.ts';

const sender = { pollIntervalMs: 20, retry: { baseMs: 20, capMs: 100 } };

/** The whole boxoffice on the embedded log of a fresh schema, one show `duo` of 2 seats on sale. */
async function boxofficeWithDuo(t: TestContext, cancelRefused: boolean) {
  const db = pgDb({ max: 16 }); // every service of the boxoffice on one pool: consumers, senders, relays
  const schema = randomName('t');
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, logger: silentLogger });
  const deps = { db, transport, schema, logger: silentLogger, groupPrefix: `${schema}-` };
  const email = await startEmailProvider();
  const payment = await startPaymentProvider();
  const boxoffice = await startBoxoffice(deps, {
    shows: [{ showId: 'duo', capacity: 2 }],
    order: { cancelRefused },
    notification: { emailUrl: email.url, ratePerSecond: 100, sender },
    payment: { providerUrl: payment.url, ratePerSecond: 100, sender },
    alerting: { everyMs: 200 },
  });
  t.after(async () => {
    await boxoffice.close();
    await Promise.all([email.close(), payment.close()]);
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  });
  const order = async (showId: string, i: number) => {
    const customer = { name: `buyer ${i}`, email: `buyer${i}@example.test` };
    const body = JSON.stringify({ showId, seats: 1, customer, amountCents: 5000 });
    const headers = { 'content-type': 'application/json' };
    const response = await fetch(`${boxoffice.order.url}/orders`, { method: 'POST', headers, body });
    assert.equal(response.status, 201);
    return ((await response.json()) as { orderId: string }).orderId;
  };
  const one = async (sql: string) => Number(Object.values((await db.query(sql)).rows[0] ?? {})[0]);
  return { db, schema, email, payment, order, one };
}

async function soldOut(t: TestContext, cancelRefused: boolean) {
  const { db, schema, email, payment, order, one } = await boxofficeWithDuo(t, cancelRefused);
  for (const i of [1, 2, 3]) await order('duo', i);
  const inventoryApplied = () =>
    one(`SELECT count(*) FROM ${schema}.processed_events WHERE consumer LIKE '%boxoffice-inventory'`);
  const cancelled = () => one(`SELECT count(*) FROM ${schema}.orders WHERE status = 'cancelled'`);
  // quiet: every order decided and charged and e-mailed, the outbox drained, inventory applied every order event
  const quiet = async () =>
    (await one(`SELECT count(*) FROM ${schema}.holds`)) === 3 &&
    payment.charges.length === 3 &&
    email.sent.length >= 3 &&
    (await one(`SELECT count(*) FROM ${schema}.outbox`)) === 0 &&
    (await inventoryApplied()) === 3 + (await cancelled());
  const done = async () =>
    (await quiet()) && (!cancelRefused || (payment.refunds.length === 1 && email.sent.length === 4));
  await eventually(done, 20_000, 'the orders settled');
  const seatsLeft = await one(`SELECT seats_left FROM ${schema}.shows WHERE show_id = 'duo'`);
  const held = await one(`SELECT count(*) FROM ${schema}.holds WHERE status = 'held'`);
  assert.deepEqual({ seatsLeft, held }, { seatsLeft: 0, held: 2 }, 'sold out, and no release of a hold never held');
  const { rows } = await db.query<{ order_id: string; status: string }>(
    `SELECT h.order_id, o.status FROM ${schema}.holds h JOIN ${schema}.orders o ON o.id = h.order_id
      WHERE h.status = 'refused'`,
  );
  assert.equal(rows.length, 1, 'one hold refused');
  const subjects = email.sent.map((sent) => sent.subject).sort();
  const refused = rows[0]!;
  return { refused, subjects, payment };
}

test('a refused order is cancelled, refunded once and told; the show gives back no seat', async (t) => {
  const { refused, subjects, payment } = await soldOut(t, true);
  assert.equal(refused.status, 'cancelled');
  assert.equal(payment.chargesFor(refused.order_id), 1);
  assert.equal(payment.refundsFor(refused.order_id), 1);
  assert.equal(payment.refunds.length, 1, 'only the refused order refunded');
  assert.deepEqual(subjects, ['Your order is cancelled', 'Your tickets', 'Your tickets', 'Your tickets']);
});

test('naive twin: without the SeatsRefused consumer, the refused customer stays charged', async (t) => {
  const { refused, subjects, payment } = await soldOut(t, false);
  assert.equal(refused.status, 'confirmed');
  assert.equal(payment.chargesFor(refused.order_id), 1);
  assert.equal(payment.refundsFor(refused.order_id), 0);
  assert.deepEqual(subjects, ['Your tickets', 'Your tickets', 'Your tickets']);
});

test('an order for a show inventory does not sell is refused too: cancelled, refunded once, told; no dead letter', async (t) => {
  const { schema, email, payment, order, one } = await boxofficeWithDuo(t, true);
  const orderId = await order('no-such-show', 1); // the order API cannot know the shows: inventory owns them
  const status = async () => (await one(`SELECT count(*) FROM ${schema}.orders WHERE status = 'cancelled'`)) === 1;
  const settled = async () => (await status()) && payment.refunds.length === 1 && email.sent.length === 2;
  const dead = () => one(`SELECT count(*) FROM ${schema}.dead_letters`);
  // before: inventory dead-lettered the order (PermanentError "no show"), and the customer stayed charged
  await eventually(async () => (await settled()) || (await dead()) > 0, 20_000, 'the order settled');
  assert.equal(await dead(), 0, 'no dead letter: a refusal, not a poison record');
  assert.equal(payment.chargesFor(orderId), 1);
  assert.equal(payment.refundsFor(orderId), 1);
  assert.deepEqual(email.sent.map((sent) => sent.subject).sort(), ['Your order is cancelled', 'Your tickets']);
  assert.equal(
    await one(`SELECT count(*) FROM ${schema}.show_availability`),
    0,
    'search lists no show that is not sold',
  );
});
