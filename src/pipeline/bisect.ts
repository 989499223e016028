import type { Logger } from '../observability/logger.ts';
import { StepError } from './commit.ts';
import { smallerForm } from './dead-letter.ts';
import { recordRefusal } from './refusals.ts';
import { letterPart, type Part, type TransformSettings } from './transform.ts';

/** The refusal of a record in `error` (the cause of a step's error), or undefined when it is no record's. */
export function refusalOf(error: unknown): { cause: unknown; codeName: string } | undefined {
  const cause = error instanceof StepError ? error.cause : error;
  const codeName = recordRefusal(cause);
  return codeName === undefined ? undefined : { cause, codeName };
}

export interface Bisecting {
  settings: Pick<TransformSettings, 'deadLetterTopic'>;
  logger: Logger;
  /** One transaction (or at-least-once send and commit) of `parts`: their items and the offset after the last. */
  commit(parts: Part[]): Promise<void>;
  /** Ends a transaction a refusal failed, so the next one can begin. */
  abort(): Promise<void>;
  /** `parts` committed (their last offset may be resolved); `ownTransaction` false when a window's transaction held them. */
  committed(parts: Part[], ownTransaction?: boolean): void;
}

/**
 * The dead letter `part` becomes after `refusal`: its input's dead letter when its outputs were refused, a smaller
 * form of its letter when the letter itself was; undefined when even the smallest letter was refused (not the record's
 * doing any more: the dead-letter topic refuses everything).
 */
function letterAfter(b: Bisecting, part: Part, refusal: { cause: unknown; codeName: string }): Part | undefined {
  if (part.letter === undefined) {
    const error = new Error(`a write of this input was refused: ${(refusal.cause as Error)?.message ?? refusal.cause}`);
    error.name = 'OutputRefused';
    return letterPart(b.settings, part.record, { error, attempts: 1, code: refusal.codeName });
  }
  const form = smallerForm(part.letter.form);
  return form === undefined ? undefined : letterPart(b.settings, part.record, part.letter.cause, form);
}

/** Tries of one part of a bisection that fails for no record's reason, before the caller's abort and rewind. */
const triesInBisection = 3;

/**
 * Commits `parts` in one transaction; when a refusal that belongs to a record fails it, the transaction is aborted and
 * the parts are split in halves, each committed in its own transaction in order, until the refusal is pinned on one
 * input: that input becomes a dead letter (or its letter a smaller one, saying what it left out) and the rest go on.
 * Any other failure is thrown (the caller aborts and rewinds to the committed offset, past the halves committed).
 * Within a bisection (`bisecting`), such a failure is first tried again: the transaction right after an abort may
 * find its messages purged (`ERR__PURGE_QUEUE`, seen with librdkafka after a lone refused record), and throwing
 * would redo the whole batch into the same purge, for ever.
 */
export async function commitBisecting(b: Bisecting, parts: Part[], bisecting = false): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await b.commit(parts);
      b.committed(parts);
      return;
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === undefined) {
        if (!bisecting || attempt >= triesInBisection) throw error;
        await b.abort();
        continue;
      }
      const letter = parts.length === 1 ? letterAfter(b, parts[0]!, refusal) : undefined;
      // Even the smallest letter refused: no record's doing any more; the caller's abort and rewind.
      if (parts.length === 1 && letter === undefined) throw error;
      await b.abort();
      if (letter === undefined) {
        const half = Math.ceil(parts.length / 2);
        await commitBisecting(b, parts.slice(0, half), true);
        await commitBisecting(b, parts.slice(half), true);
        return;
      }
      const { topic, partition, offset } = letter.record;
      b.logger.warn('pipeline: a write refused for one input; it goes to the dead-letter topic', {
        topic,
        partition,
        offset,
        code: refusal.codeName,
        form: letter.letter!.form,
      });
      await commitBisecting(b, [letter], true);
      return;
    }
  }
}
