// Child process: the order service. Saves orders and, in the same transaction, their OrderConfirmed events in the
// outbox. The naive twin (`no-outbox`) saves the order, commits, then publishes straight to Kafka: a crash between the
// two is Bruno's missing e-mail.
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { lastOrderNo, newOrders, saveOrders } from '../boxoffice/orders.ts';
import { configFromEnv } from './config.ts';
import { announceReady, crashSwitch, firstApplied } from './crash.ts';
import { chaosDb } from './db.ts';
import { isOutage, untilUp } from './retry.ts';
import { chaosTransport } from './transport.ts';

const config = configFromEnv();
const crash = crashSwitch();
const progressed = firstApplied();
const db = chaosDb();
const outbox = createOutbox({ schema: config.schema });
const producer =
  config.mode === 'no-outbox'
    ? chaosTransport(config, 'effectively').producer({ clientId: 'chaos-writer' })
    : undefined;
// Orders per transaction: 20 at the tests' rates (up to 1000/s); more at high rates, where each transaction's round
// trips would cap the writer (20 per transaction wrote about 2,000 orders/s on this busy machine).
const chunk = Math.min(200, Math.max(20, Math.round(config.rate / 50)));
const say = (line: string) => console.error(line);

/** With `keys`, orders share keys (`customer-<orderNo % keys>`): each key's events must be applied in order. */
function keyed<O extends { orderNo: number; event: { key: string } }>(order: O): O {
  if (config.keys <= 0) return order;
  return { ...order, event: { ...order.event, key: `customer-${order.orderNo % config.keys}` } };
}

/** Every `bigEvery`th order's event carries 1 to 5 MB of padding (the same size for the same order on a rewrite). */
function padded<O extends { orderNo: number; event: { data: object } }>(order: O): O {
  if (config.bigEvery <= 0 || order.orderNo % config.bigEvery !== 0) return order;
  const megabytes = 1 + (order.orderNo % 5);
  const pad = 'x'.repeat(megabytes * 1024 * 1024 - 64);
  return { ...order, event: { ...order.event, data: { ...order.event.data, pad } } };
}

const started = Date.now();
let written = 0;
announceReady();
// Where to resume: after a restart of this process, or after an outage left the last commit's outcome unknown.
const resumeAt = async () => (await untilUp(() => lastOrderNo(db, config.schema), { what: 'writer', log: say })) + 1;
let next = await resumeAt();
while (next <= config.events) {
  const orders = newOrders(config.topic, next, Math.min(next + chunk - 1, config.events))
    .map(padded)
    .map(keyed);
  try {
    await db.transaction(async (tx) => {
      await saveOrders(tx, config.schema, orders);
      if (!producer)
        await outbox.enqueue(
          tx,
          orders.map((order) => order.event),
        );
    });
  } catch (error) {
    // PostgreSQL went away (restarting): the orders and their events committed together or not at all; read which.
    if (!isOutage(error)) throw error;
    say(`chaos: writer waits for an outage to end (${(error as Error).message})`);
    await sleep(250);
    next = await resumeAt();
    continue;
  }
  crash('writer:after-save');
  progressed();
  if (producer) await producer.send(orders.map((order) => encodeEvent(order.event)));
  written += orders.length;
  next += chunk;
  if (config.rate > 0) {
    const due = started + (written / config.rate) * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
  }
}
await producer?.close();
await db.close();
