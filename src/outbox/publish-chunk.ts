import type { Logger } from '../observability/logger.ts';
import { reportOvertaken } from './overtaken.ts';
import { classifySendFailure, sendOutcomes } from './refusal.ts';
import { cutAfterOversized, type SizedRow, type TopicLimits } from './topic-limits.ts';

export interface ChunkRow extends SizedRow {
  seq: string;
  key: string;
}

export interface ChunkDeps<Row extends ChunkRow> {
  /** Sends rows in the order given; rejects when any of them failed (saying which, when the transport knows). */
  send(rows: readonly Row[]): Promise<void>;
  /** Sets one row aside as refused for good (in the pass's transaction). */
  refuse(row: Row, code: string, error: unknown): Promise<void>;
  /** Keys with a row set aside in this pass: none of their later rows may be sent (they would overtake it). */
  blocked: Set<string>;
  /** Where a row written ahead of an earlier row of its key is logged (`EFF_KEY_OVERTAKEN`). */
  logger: Logger;
  /** Told how many rows of a failed send were written ahead of an earlier row of their key (when any). */
  overtaken?(count: number): void;
  /** The topics' size limits: a row the broker may refuse for its size is sent without the later rows of its key. */
  limits: TopicLimits;
}

/**
 * Publishes one chunk and returns the rows the broker acknowledged. A row the broker may refuse for its size
 * (`deps.limits`) ends its send when a later row of its key follows: that row goes in the next send, once the first is
 * acknowledged or set aside (the client could put them in separate batches, and the broker write the later one). A send the transport refused for good is split in
 * halves, sent in order, down to the one row that is refused on its own: that row is set aside and its key blocked,
 * so the rest of the chunk flows and no later row of that key goes out ahead of it. A refusal that only a whole batch
 * earns (Kafka's RECORD_LIST_TOO_LARGE, a batch over the topic's size) ends in halves that pass, and so does a send too
 * much for the client's local queue (split, never set aside). When the transport says what became of each record
 * (`details.outcomes`), the rows the broker acknowledged are kept and never sent again: only the failed ones go on
 * (again, then in halves; the broker refuses a whole per-partition batch, so a healthy row fails beside the one too
 * big, and is only set aside when it fails alone). Any other failure is thrown: the pass rolls back and is retried as
 * it was (a broker that is down sets nothing aside).
 */
export async function publishChunk<Row extends ChunkRow>(rows: readonly Row[], deps: ChunkDeps<Row>): Promise<Row[]> {
  const open = rows.filter((row) => !deps.blocked.has(row.key));
  if (open.length === 0) return [];
  const cut = cutAfterOversized(open, deps.limits);
  if (cut !== undefined) {
    const head = await publishChunk(open.slice(0, cut), deps);
    return [...head, ...(await publishChunk(open.slice(cut), deps))];
  }
  try {
    await deps.send(open);
    deps.limits.acknowledged(open);
    return open;
  } catch (error) {
    const overtaken = reportOvertaken(open, error, deps.logger);
    if (overtaken > 0) deps.overtaken?.(overtaken);
    const kept = acknowledgedPart(open, error);
    if (kept) {
      deps.limits.acknowledged(kept.acknowledged);
      return [...kept.acknowledged, ...(await publishChunk(kept.failed, deps))];
    }
    const { failure, code } = classifySendFailure(error);
    if (failure !== 'refused' && (failure !== 'too-much' || open.length === 1)) throw error;
    if (open.length === 1) {
      const [row] = open as [Row];
      deps.blocked.add(row.key);
      if (code === 'ERR_MSG_SIZE_TOO_LARGE') deps.limits.refusedForSize(row);
      await deps.refuse(row, code, error);
      return [];
    }
    const middle = Math.ceil(open.length / 2);
    const left = await publishChunk(open.slice(0, middle), deps);
    const right = await publishChunk(open.slice(middle), deps);
    return [...left, ...right];
  }
}

/**
 * The rows of a failed send the broker acknowledged and those that failed (in order), when some were acknowledged and
 * every failure is one a smaller send may pass (refused, too much for the client); undefined otherwise.
 */
function acknowledgedPart<Row>(
  open: readonly Row[],
  error: unknown,
): { acknowledged: Row[]; failed: Row[] } | undefined {
  const outcomes = sendOutcomes(error, open.length);
  if (!outcomes) return undefined;
  const acknowledged: Row[] = [];
  const failed: Row[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.acknowledged) {
      acknowledged.push(open[index]!);
      continue;
    }
    const { failure } = classifySendFailure(outcome.error);
    if (failure !== 'refused' && failure !== 'too-much') return undefined;
    failed.push(open[index]!);
  }
  return acknowledged.length > 0 ? { acknowledged, failed } : undefined;
}
