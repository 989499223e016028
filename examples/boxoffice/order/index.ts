// The order service: an HTTP API whose writes commit with their events through the outbox, and the relay that
// publishes them to `boxoffice.orders`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutbox, createRelay, stderrLogger } from 'effectively';
import type { BoxofficeDeps, RunningService } from '../shared/deps.ts';
import { createTables } from '../shared/sql.ts';
import { orderListener } from './http.ts';
import { cancelOrder, findOrder, placeOrder } from './orders.ts';
import type { OrderRequest } from './request.ts';

export interface OrderOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Keep a row per Idempotency-Key (default true). `false` is the naive build: a retried request orders again. */
  idempotencyKeys?: boolean;
}

export interface OrderService extends RunningService {
  /** Base URL of the API, e.g. `http://127.0.0.1:40123`. */
  url: string;
}

export async function startOrder(deps: BoxofficeDeps, options: OrderOptions = {}): Promise<OrderService> {
  const { db, schema } = deps;
  const logger = deps.logger ?? stderrLogger;
  await createTables(db, import.meta.url, schema);
  const outbox = createOutbox({ schema });
  const api = {
    place: (request: OrderRequest, key: string | undefined) =>
      placeOrder(db, schema, outbox, request, key, options.idempotencyKeys ?? true),
    find: (orderId: string) => findOrder(db, schema, orderId),
    cancel: (orderId: string) => cancelOrder(db, schema, outbox, orderId),
  };
  const onError = (error: unknown) => logger.error('order: request failed', { error: String(error) });
  const server = createServer(orderListener(api, onError));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const relay = createRelay({
    db,
    schema,
    producerFactory: () => deps.transport.producer(),
    logger,
    ...(deps.faults === undefined ? {} : { faults: deps.faults }),
  });
  void relay.start();
  const { port } = server.address() as AddressInfo;
  return {
    name: 'order',
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await relay.close();
    },
  };
}
