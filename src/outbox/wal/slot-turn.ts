// One WAL relay streams from a slot at a time: the others stand by, each holding a session that asks for the slot's
// session-level advisory lock until it is theirs.
import type pg from 'pg';
import type { Logger } from '../../observability/logger.ts';
import { sleep } from '../../observability/sleep.ts';

/**
 * Waits for this relay's turn on the slot (the lock is held by `client`'s session until it ends); false when `signal`
 * aborted first. `state.standby` says whether it waits.
 */
export async function takeSlotTurn(
  client: pg.Client,
  slot: string,
  state: { standby: boolean },
  wait: { logger: Logger; backoffMs: number; signal: AbortSignal },
): Promise<boolean> {
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [
      `effectively:wal:${slot}`,
    ]);
    if (rows[0]?.ok) {
      if (state.standby) wait.logger.info('wal relay took over the slot', { slot });
      state.standby = false;
      return true;
    }
    if (!state.standby) wait.logger.info('another relay streams from this slot; standing by', { slot });
    state.standby = true;
    await sleep(wait.backoffMs, wait.signal);
    if (wait.signal.aborted) return false;
  }
}
