/**
 * What the registry server checks before a request reaches a route: its path parses, its Host is one of ours (a web
 * page in an operator's browser can reach a loopback server through DNS rebinding; the Host header gives it away),
 * its token matches when one is set, and a body comes as JSON (a browser's cross-origin form or `text/plain` POST
 * cannot set that type without a preflight this server never answers) within the size limit.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface GuardOptions {
  token: string | undefined;
  /** Host names accepted in the Host header; `undefined`: any (a token protects the server). */
  allowedHosts: ReadonlySet<string> | undefined;
  maxBodyBytes: number;
}

const loopbackNames = ['localhost', '127.0.0.1', '::1'];

export const isLoopback = (host: string): boolean =>
  loopbackNames.includes(host.toLowerCase()) || (isIP(host) === 4 && host.startsWith('127.'));

/** The Host names a server bound to `host` accepts by default: loopback names (and the bound address itself). */
export function defaultAllowedHosts(host: string, given: readonly string[] | undefined, token: string | undefined) {
  if (given !== undefined) return new Set([...given, ...loopbackNames].map((name) => name.toLowerCase()));
  if (token !== undefined && !isLoopback(host)) return undefined;
  return new Set([...loopbackNames, host.toLowerCase()]);
}

/** The path's segments, decoded; a 400 for anything that is not an origin-form path with valid escapes. */
export function pathSegments(target: string | undefined): string[] {
  const path = (target ?? '/').split('?', 1)[0] ?? '';
  if (!path.startsWith('/')) throw new HttpError(400, 40001, 'request target must be a path');
  try {
    return path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, 40001, 'request path has an invalid percent-escape');
  }
}

function hostName(header: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(header);
  if (bracketed) return bracketed[1]!.toLowerCase();
  return header.replace(/:\d*$/, '').toLowerCase();
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Throws the HttpError that answers `request` when it must not reach a route. */
export function checkRequest(request: IncomingMessage, options: GuardOptions): void {
  if (options.allowedHosts !== undefined) {
    const host = request.headers.host;
    if (host === undefined || !options.allowedHosts.has(hostName(host))) {
      throw new HttpError(403, 40301, 'Host not allowed: this registry answers only to its own names');
    }
  }
  if (options.token !== undefined) {
    const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(given), digest(options.token))) {
      throw new HttpError(401, 40101, 'missing or wrong bearer token');
    }
  }
  const method = request.method ?? 'GET';
  if (method === 'POST' || method === 'PUT') {
    const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (!/^application\/(json|vnd\.schemaregistry(\.v1)?\+json)$/.test(type)) {
      throw new HttpError(
        415,
        41501,
        'request body must be application/vnd.schemaregistry.v1+json or application/json',
      );
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > options.maxBodyBytes) {
      throw new HttpError(413, 41301, `request body larger than ${options.maxBodyBytes} bytes`);
    }
  }
}
