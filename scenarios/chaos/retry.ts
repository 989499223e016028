import { isConnectionLost, isTransientDbError } from '../../src/db/sqlstate.ts';
import { sleep } from '../../src/observability/sleep.ts';

/**
 * True for a failure an outage explains: the database or the broker went away and will come back. pg's client that
 * lost its server mid-transaction answers its next query with "Client has encountered a connection error and is not
 * queryable" (no code): the writer crashed on it at a PostgreSQL restart (the library's isConnectionLost misses it).
 */
export function isOutage(error: unknown): boolean {
  return (
    isConnectionLost(error) ||
    isTransientDbError(error) ||
    silentConnection(error) ||
    /is not queryable/.test(String((error as Error)?.message))
  );
}

/**
 * A connection gone silent (`--net-faults`), as pg reports it: its watchdog ("Query read timeout", no code), a connect
 * with no answer, or the server's end of a session that sat silent in its transaction (25P03) or of a statement stuck
 * behind a silent session's locks (57014). The writer crashed on the watchdog's error in the first 100,000-event run.
 */
function silentConnection(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    code === '25P03' ||
    code === '57014' ||
    /Query read timeout|timeout exceeded when trying to connect|Connection terminated/.test(
      String((error as Error)?.message),
    )
  );
}

/**
 * Runs `work` until it succeeds, waiting out outages (PostgreSQL restarting, the broker down): the kit must outlive the
 * faults it injects. Other errors are thrown, unless `retryAll` (a child's start-up, whose errors an outage may explain
 * in any shape).
 */
export async function untilUp<T>(
  work: () => Promise<T>,
  options: { what: string; retryAll?: boolean; log?: (line: string) => void; giveUpAfterMs?: number } = { what: '' },
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const waited = Date.now() - started;
      if (!(options.retryAll || isOutage(error)) || waited > (options.giveUpAfterMs ?? 600_000)) throw error;
      if (attempt === 1 || attempt % 10 === 0) {
        options.log?.(`chaos: ${options.what} waits for an outage to end (${(error as Error).message ?? error})`);
      }
      await sleep(Math.min(2000, 100 * attempt));
    }
  }
}
