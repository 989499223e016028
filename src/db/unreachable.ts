// The everyday database failures of a first run (no server there, a database never created, a login refused) as one
// coded error that says what was tried, against what, and what to do, instead of the driver's stack.
import { EffectivelyError, ErrorCodes } from '../errors.ts';

const network = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
// The driver's connect timeouts carry no code, only these messages (the client's own timer, the pool's timer, a
// checkout waiting past its bound): a server that accepted the connection and never answered.
const connectTimeouts = new Set([
  'timeout expired',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
]);

function connectTimedOut(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (connectTimeouts.has(e.message)) return true;
  return false;
}

/**
 * `EFF_DB_UNREACHABLE` for a connection that could not be made or a database that does not exist on `where` (a
 * `host:port/name` label, never the password); undefined for anything else (a statement's own error).
 */
export function databaseUnreachable(error: unknown, where: string): EffectivelyError | undefined {
  const code = String((error as { code?: unknown }).code ?? '');
  const said = String((error as Error)?.message ?? error).replace(/\s+/g, ' ');
  const [reason, todo] = network.has(code)
    ? ['no-server', 'start PostgreSQL there, or set DATABASE_URL to a running server']
    : !code && connectTimedOut(error)
      ? [
          'no-answer',
          'the server took the connection and never answered: check that PostgreSQL runs there (not a proxy or another service on its port)',
        ]
      : code === '3D000'
        ? ['no-database', `create it (\`createdb ${where.split('/').pop()}\`), or set DATABASE_URL to one that exists`]
        : code === '28P01' || code === '28000'
          ? ['login-refused', 'set the user and password in DATABASE_URL (postgres://user:password@host:port/name)']
          : [undefined, undefined];
  if (reason === undefined) return undefined;
  return new EffectivelyError(ErrorCodes.EFF_DB_UNREACHABLE, `could not use the database ${where} (${said}): ${todo}`, {
    cause: error,
    retryable: reason === 'no-server' || reason === 'no-answer',
    details: { reason, where, ...(code ? { sqlState: code } : {}) },
  });
}
