// effectively console: a small HTTP server and page on the library's API. Run it with `effectively console` against
// the PostgreSQL server, or mount it in the application's process (an embedded PGlite no other process may open).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiRoutes } from './api.ts';
import { auditLog } from './audit.ts';
import { type ConsoleUser, cookieName, csrfGuard, requestToken, roleOfToken } from './auth.ts';
import { healthView } from './health.ts';
import { HttpError, matchPath, type Route, readJson, send, sendJson } from './http.ts';
import { redriveJobs } from './jobs.ts';
import { metricsRoute } from './metrics-route.ts';
import { type ConsoleOptions, consoleSettings } from './options.ts';

export interface EffectivelyConsole {
  /** Listens on `host:port`; resolves to the base URL. Not needed when you mount `handle` in your own server. */
  start(): Promise<string>;
  /** The base URL once started (`http://127.0.0.1:port`). */
  readonly url: string;
  /** The links that log in with each role's token (undefined with `authenticate`). */
  readonly links: { operator: string; reader: string } | undefined;
  /** Answers one request: mount it in your own server (`createServer(console.handle)`). */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Adds a route (`/metrics`, say); `role: 'public'` needs no login. */
  route(route: Route): void;
  /** Stops listening and cancels running redrive jobs between steps. Never closes `db`. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const pageDir = new URL('./page/', import.meta.url);
const pageFiles: [string, string, string][] = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ...['console', 'dom', 'health', 'letters', 'jobs'].map((name): [string, string, string] => [
    `/${name}.js`,
    `${name}.js`,
    'text/javascript; charset=utf-8',
  ]),
  ['/console.css', 'console.css', 'text/css; charset=utf-8'],
];

export function createConsole(options: ConsoleOptions): EffectivelyConsole {
  const { db } = options;
  const { schema, host, port, basePath, transport, readOnly, logger, tokens, metrics } = consoleSettings(options);
  const csrf = csrfGuard();
  const audit = auditLog(db, schema);
  const jobs = redriveJobs({ db, schema, transport, audit, logger });
  const health = healthView({ ...options, db, schema, transport: transport ?? 'kafka' });
  const routes: Route[] = [
    ...pageFiles.map(([path, file, type]): Route => {
      const body = readFileSync(new URL(file, pageDir));
      return {
        method: 'GET',
        path,
        role: 'public',
        handle: ({ response }) => {
          send(response, 200, body, type);
          return undefined;
        },
      };
    }),
    ...apiRoutes({ db, schema, readOnly, health, jobs, audit, csrfFor: csrf.tokenFor }),
    ...(metrics === false ? [] : [metricsRoute({ db, schema, logger, role: metrics })]),
  ];
  let server: Server | undefined;
  let url = '';

  function findRoute(method: string | undefined, path: string) {
    for (const route of routes) {
      const params = route.method === method ? matchPath(route.path, path) : undefined;
      if (params) return { route, params };
    }
    return undefined;
  }

  async function userOf(request: IncomingMessage): Promise<ConsoleUser | undefined> {
    if (options.authenticate) return options.authenticate(request);
    const role = roleOfToken(tokens!, requestToken(request));
    return role ? { name: `token:${role}`, role } : undefined;
  }

  /** `/?token=…`: the token goes into an HttpOnly, same-site cookie and out of the address bar. */
  function logIn(response: ServerResponse, token: string): void {
    if (!tokens || !roleOfToken(tokens, token)) {
      send(response, 401, 'unknown token', 'text/plain; charset=utf-8');
      return;
    }
    response.writeHead(303, {
      location: `${basePath}/`,
      'set-cookie': `${cookieName}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=${basePath || '/'}`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    response.end();
  }

  async function refuse(route: Route, user: ConsoleUser, status: number, why: string, response: ServerResponse) {
    if (route.action)
      await audit
        .record(user, {
          action: `${route.method} ${route.path}`,
          target: route.path,
          outcome: 'refused',
          details: { why },
        })
        .catch((error: unknown) => logger.warn('console audit failed', { error: String(error) }));
    sendJson(response, status, { error: why });
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const address = new URL(request.url ?? '/', 'http://console.invalid');
      if (basePath) {
        if (address.pathname === basePath) {
          response.writeHead(308, { location: `${basePath}/` }).end();
          return;
        }
        if (!address.pathname.startsWith(`${basePath}/`)) return sendJson(response, 404, { error: 'no such route' });
        address.pathname = address.pathname.slice(basePath.length);
      }
      const token = address.searchParams.get('token');
      if (request.method === 'GET' && address.pathname === '/' && token) return logIn(response, token);
      const found = findRoute(request.method, address.pathname);
      if (!found) return sendJson(response, 404, { error: 'no such route' });
      const { route, params } = found;
      const anonymous: ConsoleUser = { name: 'anonymous', role: 'reader' };
      if (route.role === 'public')
        return void (await route.handle({ request, response, url: address, params, user: anonymous, body: undefined }));
      const user = await userOf(request);
      if (!user) return sendJson(response, 401, { error: 'log in with the link the console printed' });
      if (route.role === 'operator' && user.role !== 'operator')
        return refuse(route, user, 403, 'refused: this needs the operator role', response);
      if (route.action && readOnly) return refuse(route, user, 403, 'refused: the console is read-only', response);
      if (route.action && !csrf.check(request, user))
        return refuse(route, user, 403, 'refused: missing or wrong CSRF token', response);
      const body = request.method === 'POST' ? await readJson(request) : undefined;
      const result = await route.handle({ request, response, url: address, params, user, body });
      if (result) sendJson(response, result.status ?? 200, result.json);
    } catch (error) {
      if (error instanceof HttpError) return sendJson(response, error.status, { error: error.message });
      logger.error('console request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!response.headersSent) sendJson(response, 500, { error: error instanceof Error ? error.message : 'failed' });
    }
  }

  let closing: Promise<void> | undefined;
  const effectivelyConsole: EffectivelyConsole = {
    async start() {
      if (server) return url;
      // the audit log's table: a schema migrated before the console says so now (EFF_NOT_MIGRATED), not per request
      await db.query(`SELECT 1 FROM ${schema}.console_audit LIMIT 0`);
      server = createServer((request, response) => void handle(request, response));
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, host, () => resolve());
      });
      const bound = server.address() as AddressInfo;
      url = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
      return url;
    },
    get url() {
      return url;
    },
    get links() {
      if (!tokens) return undefined;
      const home = `${url}${basePath}/`;
      return { operator: `${home}?token=${tokens.operator}`, reader: `${home}?token=${tokens.reader}` };
    },
    handle,
    route(route) {
      routes.push(route);
    },
    close() {
      closing ??= (async () => {
        await jobs.close();
        if (!server) return;
        const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return effectivelyConsole.close();
    },
  };
  return effectivelyConsole;
}
export type { ConsoleOptions } from './options.ts';
