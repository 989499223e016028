import { ErrorCodes } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { classifySendFailure, sendOutcomes } from './refusal.ts';

export interface OvertakenRow {
  seq: string;
  key: string;
  topic?: string;
}

/**
 * Logs, as an `EFF_KEY_OVERTAKEN` error, each row of a failed send that the broker acknowledged while an earlier row
 * of its key in the same send failed: it is on the topic ahead of that row, which goes again later (or is set aside).
 * The relay cannot take it back; with the Kafka transport's default `enable.gapless.guarantee` a refusal writes
 * nothing behind it, so this is seen only with that guarantee turned off or a row that timed out (docs/relay.md).
 * Returns how many rows were overtaken.
 */
export function reportOvertaken(rows: readonly OvertakenRow[], error: unknown, logger: Logger): number {
  const outcomes = sendOutcomes(error, rows.length);
  if (!outcomes) return 0;
  const failedFirst = new Map<string, { row: OvertakenRow; error: unknown }>();
  let overtaken = 0;
  for (const [index, outcome] of outcomes.entries()) {
    const row = rows[index]!;
    if (!outcome.acknowledged) {
      if (!failedFirst.has(row.key)) failedFirst.set(row.key, { row, error: outcome.error });
      continue;
    }
    const earlier = failedFirst.get(row.key);
    if (!earlier) continue;
    overtaken++;
    logger.error('relay: a row was written ahead of an earlier row of its key that failed in the same send', {
      code: ErrorCodes.EFF_KEY_OVERTAKEN,
      key: row.key,
      topic: row.topic,
      seq: String(row.seq),
      earlierSeq: String(earlier.row.seq),
      earlierCode: classifySendFailure(earlier.error).code,
    });
  }
  return overtaken;
}
