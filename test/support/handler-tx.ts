import type { Db, Queryable } from '../../src/db/port.ts';

class Rollback extends Error {}

/**
 * A handler sends `text` on `view(tx)` (after `setting`, when given, on the transaction itself), then a later record
 * of its batch fails and the transaction rolls back. Returns what the handler's query rejected with (undefined when it
 * ran): the caller reads the table to see what was left.
 */
export async function sentThenBatchFails(
  db: Db,
  view: (tx: Queryable) => Queryable,
  text: string,
  setting?: string,
): Promise<unknown> {
  let refused: unknown;
  await db
    .transaction(async (tx) => {
      if (setting !== undefined) await tx.query(setting);
      await view(tx)
        .query(text)
        .catch((error: unknown) => {
          refused = error;
        });
      throw new Rollback('a later record of the batch fails');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return refused;
}
