// Who is asking and what they may do: a token (a link printed at start, then an HttpOnly cookie) or the
// application's own hook, two roles, and the CSRF check every action passes. Enforced here, on the server.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** `reader` sees everything; `operator` may also act (redrive, cancel, discard). */
export type ConsoleRole = 'reader' | 'operator';

/** Who the request is from, as the console knows them. */
export interface ConsoleUser {
  /** A name for the audit log (`token:operator`, or what the hook says). */
  name: string;
  role: ConsoleRole;
}

/** The application's own authentication: its user and role for a request, or undefined to refuse (401). */
export type ConsoleAuthenticate = (
  request: IncomingMessage,
) => ConsoleUser | undefined | Promise<ConsoleUser | undefined>;

export const cookieName = 'effectively_console';

export interface ConsoleTokens {
  operator: string;
  reader: string;
}

/** Tokens given, or fresh random ones (32 bytes, URL-safe). */
export function consoleTokens(given: Partial<ConsoleTokens> = {}): ConsoleTokens {
  const fresh = () => randomBytes(32).toString('base64url');
  return { operator: given.operator ?? fresh(), reader: given.reader ?? fresh() };
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The role a token gives, if any. */
export function roleOfToken(tokens: ConsoleTokens, token: string | undefined): ConsoleRole | undefined {
  if (!token) return undefined;
  if (same(token, tokens.operator)) return 'operator';
  if (same(token, tokens.reader)) return 'reader';
  return undefined;
}

/** The token a request carries: `Authorization: Bearer`, else the console's cookie. */
export function requestToken(request: IncomingMessage): string | undefined {
  const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
  if (bearer) return bearer[1];
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookieName) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/** Signs and checks the CSRF token of a user: an HMAC of who they are under a secret of this server's life. */
export function csrfGuard(secret: Buffer = randomBytes(32)) {
  const tokenFor = (user: ConsoleUser) =>
    createHmac('sha256', secret).update(`${user.role}\n${user.name}`).digest('base64url');
  return {
    tokenFor,
    /**
     * An action must carry `x-csrf-token` (a header a cross-site form cannot set, and a cross-site script cannot read
     * the value of), and when the browser names an `Origin`, it must be this server's own.
     */
    check(request: IncomingMessage, user: ConsoleUser): boolean {
      const origin = request.headers.origin;
      if (
        origin !== undefined &&
        origin !== `http://${request.headers.host}` &&
        origin !== `https://${request.headers.host}`
      )
        return false;
      const sent = request.headers['x-csrf-token'];
      return typeof sent === 'string' && same(sent, tokenFor(user));
    },
  };
}
