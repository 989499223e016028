// The project's private PostgreSQL cluster (scripts/postgres.sh), the only one the kit restarts: the machine's shared
// server is never touched. Its URL is always read from `postgres.sh url` (the port may not be 55432: `start` takes
// another when that one is held by something else).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sleep } from '../../src/observability/sleep.ts';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

export interface PrivatePostgres {
  url: string;
  /** This run started it (it was not running): the run stops it at its end. */
  startedHere: boolean;
  /** Fast shutdown, `downMs` with no server, start; resolves with the seconds it was down. */
  restart(downMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the private cluster (reused when it runs already); `home` is its PG_HOME_DIR (default the checkout's). */
export async function startPrivatePostgres(home?: string): Promise<PrivatePostgres> {
  const env = { ...process.env, ...(home ? { PG_HOME_DIR: home } : {}) };
  const pg = (command: string, extra: Record<string, string> = {}) =>
    run('bash', [script, command], { env: { ...env, ...extra }, timeout: 120_000 });
  const startedHere = await pg('status').then(
    () => false,
    () => true,
  );
  await pg('start');
  const url = (await pg('url')).stdout.trim();
  return {
    url,
    startedHere,
    async restart(downMs = 2000) {
      const down = Date.now();
      await pg('stop');
      await sleep(downMs);
      // Back on the same port (the children hold its URL); on another only if someone took ours while it was down:
      // that is a failed restart, not a silent move.
      await pg('start', { PG_PRIVATE_PORT: new URL(url).port });
      const now = (await pg('url')).stdout.trim();
      if (now !== url) throw new Error(`the private cluster came back on ${now}, not ${url} (its port was taken)`);
      return (Date.now() - down) / 1000;
    },
    async stop() {
      await pg('stop');
    },
  };
}
