// The order service: an HTTP API whose writes commit with their events through the outbox, the relay that publishes
// them to `boxoffice.orders`, and a consumer of `boxoffice.seats` that cancels an order whose seats were refused.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsumer, createOutbox, createRelay, stderrLogger } from 'effectively';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from '../shared/deps.ts';
import { seatsTopic } from '../shared/events.ts';
import { createTables } from '../shared/sql.ts';
import { orderListener } from './http.ts';
import { cancelOrder, findOrder, placeOrder } from './orders.ts';
import { refusalHandler } from './refusals.ts';
import type { OrderRequest } from './request.ts';

export interface OrderOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Keep a row per Idempotency-Key (default true). `false` is the naive build: a retried request orders again. */
  idempotencyKeys?: boolean;
  /** Cancel an order whose seats inventory refused (default true). `false` is the naive build: it stays charged. */
  cancelRefused?: boolean;
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
  const faults = deps.faults === undefined ? {} : { faults: deps.faults };
  const refusals =
    (options.cancelRefused ?? true)
      ? createConsumer({
          db,
          transport: deps.transport,
          schema,
          group: groupName(deps, 'order'),
          topics: [seatsTopic],
          retention: dedupRetention,
          logger,
          ...faults,
          handler: refusalHandler(schema, outbox),
        })
      : undefined;
  await refusals?.start();
  const onError = (error: unknown) => logger.error('order: request failed', { error: String(error) });
  const server = createServer(orderListener(api, onError));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const relay = createRelay({ db, schema, producerFactory: () => deps.transport.producer(), logger, ...faults });
  void relay.start();
  const { port } = server.address() as AddressInfo;
  return {
    name: 'order',
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await refusals?.close();
      await relay.close();
    },
  };
}
