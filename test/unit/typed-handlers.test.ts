// createConsumer<T> types event.data in handler, batchHandler and onOutcome. The checks are the compiler's: this file
// is type-checked by `npm run typecheck` (part of `npm test`), and each @ts-expect-error fails it if the line compiles.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Db } from '../../src/db/port.ts';
import type { Transport } from '../../src/transport/port.ts';

interface OrderConfirmed {
  orderId: string;
  total: number;
}

test('createConsumer<T>: data typed as T; without T it is unknown', () => {
  const typed = (db: Db, transport: Transport) =>
    createConsumer<OrderConfirmed>({
      db,
      transport,
      group: 'g',
      topics: ['orders'],
      handler: async (event) => {
        const total: number = event.data.total;
        // @ts-expect-error a field OrderConfirmed does not have
        void event.data.missing;
        void total;
      },
      onOutcome: (event) => void (event.data.orderId satisfies string),
    });
  const batch = (db: Db, transport: Transport) =>
    createConsumer<OrderConfirmed>({
      db,
      transport,
      group: 'g',
      topics: ['orders'],
      batchHandler: async (events) => void events.map((event) => event.data.orderId.length),
    });
  const untyped = (db: Db, transport: Transport) =>
    createConsumer({
      db,
      transport,
      group: 'g',
      topics: ['orders'],
      handler: async (event) => {
        // @ts-expect-error data is unknown until the consumer says what it expects
        void event.data.orderId;
      },
    });
  assert.deepEqual([typeof typed, typeof batch, typeof untyped], ['function', 'function', 'function']);
});
