// The console's HTTP plumbing: a route table (adding a route is one line), JSON in and out, the security headers every
// answer carries. node:http only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleRole, ConsoleUser } from './auth.ts';

/** What a route handler gets: the parsed URL, its `:params`, the user, and the JSON body of a POST. */
export interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  url: URL;
  params: Record<string, string>;
  user: ConsoleUser;
  body: unknown;
}

/** A handler's answer: JSON (status 200 unless said), or it wrote the response itself (undefined). */
export type RouteResult = { status?: number; json: unknown } | undefined;

export interface Route {
  method: 'GET' | 'POST';
  /** `/api/letters/:id`: segments starting with `:` match any one segment. */
  path: string;
  /** The least role that may call it; `public` needs no user (the page's own files). */
  role: ConsoleRole | 'public';
  /** An action: refused in read-only mode, checked for CSRF, written to the audit log when refused. */
  action?: boolean;
  handle(context: RouteContext): Promise<RouteResult> | RouteResult;
}

/** `path` against a route's pattern: its params, or undefined. */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(got[i]!);
    else if (part !== got[i]) return undefined;
  }
  return params;
}

/**
 * Headers on every answer: no script but the console's own, no framing, no sniffing a JSON answer into HTML, no
 * referrer (the first link carries a token), nothing cached.
 */
export const securityHeaders: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function send(response: ServerResponse, status: number, body: string | Buffer, type: string): void {
  response.writeHead(status, { ...securityHeaders, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** JSON with `<`, `>` and `&` escaped too: the answer holds hostile text, and is never markup even if read as such. */
export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  send(response, status, text, 'application/json; charset=utf-8');
}

const maxBody = 1024 * 1024;

/** A POST's body: JSON only (a cross-site form cannot send it without a preflight), at most 1 MiB. */
export async function readJson(request: IncomingMessage): Promise<unknown> {
  if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) throw new HttpError(415, 'send JSON');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBody) throw new HttpError(413, 'body over 1 MiB');
    chunks.push(chunk);
  }
  try {
    return chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

/** An answer other than 200, with a reason the page shows. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
