// What the reference providers (examples/email-provider, examples/payment-provider) share: reading and answering
// JSON over node:http, an idempotency store keyed by `Idempotency-Key` (the same key: the first answer again), a
// fault that lasts for a while or for a number of requests, and held responses (a "timeout" that never answers).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

const maxBody = 1_000_000;

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody) request.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function reply(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}

/** The request's `Idempotency-Key`, or null without one. */
export function idempotencyKeyOf(request: IncomingMessage): string | null {
  const header = request.headers['idempotency-key'];
  return typeof header === 'string' && header !== '' ? header : null;
}

/** The answer kept for a key. */
export interface Stored {
  status: number;
  body: string;
  /** Hash of the request body: the same key with another body is refused (422). */
  request: string;
  done: boolean;
}

/** Keeps the first answer per idempotency key, as payment and e-mail APIs do. */
export class IdempotencyStore {
  readonly #stored = new Map<string, Stored>();
  /** Requests answered from the store (nothing done again). */
  replays = 0;

  /**
   * Answers a request whose key was seen (a replay, 422 for another body, 409 while the first is running) and
   * returns true; or returns false: the caller handles it and then calls `begin` (unless it refuses it unstored).
   */
  answered(key: string | null, text: string, response: ServerResponse): boolean {
    const previous = key === null ? undefined : this.#stored.get(key);
    if (!previous) return false;
    if (previous.request !== hash(text)) reply(response, 422, { error: 'idempotency_key_reused' });
    else if (!previous.done) reply(response, 409, { error: 'idempotent_request_in_progress' });
    else {
      this.replays += 1;
      response.writeHead(previous.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      response.end(previous.body);
    }
    return true;
  }

  /** Holds `key` for this request (in progress) and returns the entry to complete with `finish`. */
  begin(key: string | null, text: string): Stored {
    const entry: Stored = { status: 0, body: '', request: hash(text), done: false };
    if (key !== null) this.#stored.set(key, entry);
    return entry;
  }

  finish(entry: Stored, status: number, body: unknown): void {
    entry.status = status;
    entry.body = JSON.stringify(body);
    entry.done = true;
  }

  /** Answers a lookup by key: the completed answer stored for it, or 404 (never seen, or still running). */
  answerLookup(key: string, response: ServerResponse): void {
    const stored = this.#stored.get(key);
    if (!stored?.done) reply(response, 404, { error: 'not_found' });
    else {
      response.writeHead(stored.status, { 'content-type': 'application/json' });
      response.end(stored.body);
    }
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A fault that lasts `forMs`, or `times` requests, or until healed. */
export interface Lasting {
  forMs?: number;
  times?: number;
}

export class FaultSwitch<F extends Lasting> {
  #fault: (F & { until?: number }) | undefined;
  constructor(private readonly now: () => number) {}

  set(spec: F): void {
    this.#fault = spec.forMs === undefined ? { ...spec } : { ...spec, until: this.now() + spec.forMs };
  }

  heal(): void {
    this.#fault = undefined;
  }

  /** The fault this request meets, if any (and counts it against `times`). */
  next(): F | undefined {
    const fault = this.#fault;
    if (!fault) return undefined;
    if ((fault.until !== undefined && this.now() >= fault.until) || (fault.times !== undefined && fault.times <= 0)) {
      this.#fault = undefined;
      return undefined;
    }
    if (fault.times !== undefined) fault.times -= 1;
    return fault;
  }
}

export interface Listening {
  url: string;
  /** Keeps a response unanswered until it closes or the server does (a provider whose answer is lost). */
  hold(response: ServerResponse): void;
  close(): Promise<void>;
}

/** Serves `route` on `host:port` (default 127.0.0.1, any free port); a route that throws answers 500. */
export async function listen(
  route: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: { port?: number; host?: string },
): Promise<Listening> {
  const held = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, { error: String(error) });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    hold(response) {
      held.add(response);
      response.on('close', () => held.delete(response));
    },
    async close() {
      for (const response of held) response.destroy();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `POST /admin/faults` (a fault as JSON) and `DELETE /admin/faults` (healthy again); false for any other request. */
export async function adminFaults<F>(
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
  provider: { fail(fault: F): void; heal(): void },
): Promise<boolean> {
  if (path !== '/admin/faults' || (request.method !== 'POST' && request.method !== 'DELETE')) return false;
  if (request.method === 'POST') provider.fail(JSON.parse(await readBody(request)) as F);
  else provider.heal();
  reply(response, 204, undefined);
  return true;
}

/** When `moduleUrl` is the script node runs: starts the provider on `PORT` (or `port`) until SIGINT or SIGTERM. */
export async function runAlone(
  moduleUrl: string,
  name: string,
  port: number,
  start: (options: { port: number }) => Promise<{ url: string; close(): Promise<void> }>,
): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const provider = await start({ port: Number(process.env.PORT ?? port) });
  process.stdout.write(`${name} listening on ${provider.url}\n`);
  const stop = () => void provider.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
