// A `--relay wal` run leaves a replication slot and a publication on the private cluster: dropped with the run's
// schema, or the slot would keep the cluster's WAL for ever.
import type { Db } from '../../src/db/port.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { dropWalSlot, walNames } from '../../src/outbox/wal/slot.ts';

export async function dropWal(db: Db, schema: string, log: (line: string) => void): Promise<void> {
  // The killed relay's walsender may still hold the slot for a moment (55006: active).
  for (let attempt = 1; ; attempt++) {
    try {
      await dropWalSlot(db, { schema });
      break;
    } catch (error) {
      if (attempt >= 20) {
        log(`chaos: could not drop the replication slot: ${(error as Error).message}`);
        break;
      }
      await sleep(500);
    }
  }
  await db.query(`DROP PUBLICATION IF EXISTS ${walNames(schema).publication}`).catch(() => undefined);
}
