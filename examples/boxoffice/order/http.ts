// The order service's HTTP API on node:http:
//   POST /orders              {showId, seats, customer: {name, email}, amountCents} (+ Idempotency-Key) → 201, or 200
//                             with the order it made before when the key was used already
//   GET  /orders/:id          → 200 the order, 404
//   POST /orders/:id/cancel   → 200 the cancelled order, 404
// A bad request is answered 4xx with {"error": reason}; a failure of the service itself 503 (try again), never 500.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isUuid } from 'effectively';
import { BadRequest, type OrderRequest, parseOrderRequest } from './request.ts';

export interface OrderApi {
  place(request: OrderRequest, key: string | undefined): Promise<{ order: unknown; created: boolean }>;
  find(orderId: string): Promise<unknown | null>;
  cancel(orderId: string): Promise<unknown>;
}

const maxBody = 64 * 1024;

async function readJson(request: IncomingMessage): Promise<unknown> {
  const type = request.headers['content-type'];
  if (type !== undefined && !type.startsWith('application/json'))
    throw new BadRequest(415, 'the body must be application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBody) throw new BadRequest(413, `the body is larger than ${maxBody} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest(400, 'the body is not valid JSON');
  }
}

function idempotencyKey(request: IncomingMessage): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > 200)
    throw new BadRequest(400, 'Idempotency-Key must be 1..200 characters');
  return key;
}

function orderIdOf(segment: string | undefined): string {
  if (!segment || !isUuid(segment)) throw new BadRequest(404, 'no such order (an order id is a UUID)');
  return segment.toLowerCase();
}

async function route(api: OrderApi, request: IncomingMessage): Promise<[number, unknown]> {
  const path = new URL(request.url ?? '/', 'http://order').pathname.split('/').filter(Boolean);
  const method = request.method ?? 'GET';
  if (path[0] !== 'orders' || path.length > 3) throw new BadRequest(404, 'no such resource');
  if (path.length === 1 && method === 'POST') {
    const key = idempotencyKey(request);
    const placed = await api.place(parseOrderRequest(await readJson(request)), key);
    return [placed.created ? 201 : 200, placed.order];
  }
  if (path.length === 2 && method === 'GET') {
    const order = await api.find(orderIdOf(path[1]));
    if (order === null) throw new BadRequest(404, `no order ${path[1]}`);
    return [200, order];
  }
  if (path.length === 3 && path[2] === 'cancel' && method === 'POST')
    return [200, await api.cancel(orderIdOf(path[1]))];
  throw new BadRequest(404, `no route ${method} ${request.url}`);
}

/** The request listener: every answer is JSON. */
export function orderListener(api: OrderApi, onError: (error: unknown) => void) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let status: number;
    let body: unknown;
    try {
      [status, body] = await route(api, request);
    } catch (error) {
      if (error instanceof BadRequest) [status, body] = [error.status, { error: error.message }];
      else {
        onError(error);
        [status, body] = [503, { error: 'the order service could not answer; try again' }];
        response.setHeader('retry-after', '1');
      }
      request.resume(); // an unread body must not hold the connection
    }
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
}
