// Child process: the order service. Saves orders and, in the same transaction, their OrderConfirmed events in the
// outbox. The naive twin (`no-outbox`) saves the order, commits, then publishes straight to Kafka: a crash between the
// two is Bruno's missing e-mail.

import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { uuidv7 } from '../../src/envelope/uuidv7.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { configFromEnv } from './config.ts';
import { crashSwitch } from './crash.ts';
import { chaosDb } from './db.ts';

const config = configFromEnv();
const crash = crashSwitch();
const db = chaosDb();
const outbox = createOutbox({ schema: config.schema });
const producer = config.mode === 'no-outbox' ? kafkaTransport().producer({ clientId: 'chaos-writer' }) : undefined;
const chunk = 20;

const { rows } = await db.query<{ last: number }>(
  `SELECT coalesce(max(order_no), 0) AS last FROM ${config.schema}.orders`,
);
const started = Date.now();
let written = 0;
for (let next = Number(rows[0]?.last ?? 0) + 1; next <= config.events; next += chunk) {
  const events: { orderNo: number; event: Event }[] = [];
  for (let orderNo = next; orderNo < Math.min(next + chunk, config.events + 1); orderNo++) {
    const orderId = uuidv7();
    events.push({
      orderNo,
      event: createEvent({
        topic: config.topic,
        type: 'boxoffice.order.confirmed',
        source: '/boxoffice/orders',
        key: orderId,
        version: 1,
        data: { orderId, orderNo, email: `buyer${orderNo}@example.test` },
      }),
    });
  }
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${config.schema}.orders (id, order_no) SELECT unnest($1::uuid[]), unnest($2::int[])`, [
      events.map((e) => (e.event.data as { orderId: string }).orderId),
      events.map((e) => e.orderNo),
    ]);
    if (!producer)
      await outbox.enqueue(
        tx,
        events.map((e) => e.event),
      );
  });
  crash('writer:after-save');
  if (producer) await producer.send(events.map((e) => encodeEvent(e.event)));
  written += events.length;
  if (config.rate > 0) {
    const due = started + (written / config.rate) * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
  }
}
await producer?.close();
await db.close();
