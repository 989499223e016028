import type { Db } from '../../db/port.ts';
import { slotState, walNames } from '../../outbox/wal/slot.ts';
import { type Finding, finding } from './finding.ts';

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

/**
 * The WAL relay's replication slot (`source: 'wal'`): invalidated (the relay cannot stream), abandoned (no relay
 * streams from it and it keeps the server's WAL), or its lag. No slot: the schema's relay polls.
 */
export async function checkWalSlot(db: Db, schema: string, warnBytes = 1024 ** 3): Promise<Finding> {
  const { slot } = walNames(schema);
  const state = await slotState(db, slot);
  if (!state) return finding('ok', 'wal-slot', `no replication slot ${slot} (the relay reads the outbox table)`);
  if (state.walStatus === 'lost') {
    return finding(
      'fail',
      'wal-slot',
      `replication slot ${slot} was invalidated by PostgreSQL (max_slot_wal_keep_size): the WAL relay cannot stream`,
      `drop it (SELECT pg_drop_replication_slot('${slot}')) and start the relay again: it publishes the rows still in the outbox first`,
    );
  }
  const { rows } = await db.query<{ keep: string }>("SELECT current_setting('max_slot_wal_keep_size') AS keep");
  const unbounded = rows[0]?.keep === '-1';
  if (state.activePid === null && state.retainedBytes > warnBytes) {
    return finding(
      'warn',
      'wal-slot',
      `replication slot ${slot} has no relay streaming and holds ${mb(state.retainedBytes)} of WAL`,
      `start its relay (source: 'wal'), or drop the slot if that relay is retired for good${unbounded ? '; set max_slot_wal_keep_size so an abandoned slot cannot fill the disk' : ''}`,
    );
  }
  return finding(
    'ok',
    'wal-slot',
    `replication slot ${slot}: ${state.activePid === null ? 'no relay streaming now' : 'a relay streaming'}, ${mb(state.lagBytes)} behind, ${mb(state.retainedBytes)} of WAL held${unbounded ? ' (max_slot_wal_keep_size unbounded)' : ''}`,
  );
}
