import { isPermanent, type PermanentErrors } from '../consumer/classify.ts';
import { deadLetter, type LetterCause, type LetterForm } from './dead-letter.ts';
import type { ClientMessage } from './messages.ts';
import { toClientMessage } from './messages.ts';
import type { PipelineOutput, PipelineRecord, Transform } from './types.ts';

export interface TransformSettings {
  transform: Transform;
  to: string;
  deadLetterTopic: (record: PipelineRecord) => string;
  maxAttempts: number;
  permanent: PermanentErrors;
}

/**
 * What one input writes in its batch's transaction: its outputs, or its dead letter (with what made it one and the form
 * it is in, so a letter its topic refuses can be written again smaller).
 */
export interface Part {
  record: PipelineRecord;
  items: { topic: string; message: ClientMessage }[];
  /** Set when `items` is the input's dead letter. */
  letter?: { cause: LetterCause; form: LetterForm };
}

/** The dead letter of `record`, in `form`, as its part of the batch. */
export function letterPart(
  settings: Pick<TransformSettings, 'deadLetterTopic'>,
  record: PipelineRecord,
  cause: LetterCause,
  form: LetterForm = 'whole',
): Part {
  const message = deadLetter(record, cause, form);
  return { record, items: [{ topic: settings.deadLetterTopic(record), message }], letter: { cause, form } };
}

async function outputsOf(settings: TransformSettings, record: PipelineRecord) {
  const result = await settings.transform(record);
  const list: readonly PipelineOutput[] =
    result === null || result === undefined ? [] : Array.isArray(result) ? result : [result as PipelineOutput];
  // Converted here, so an output Kafka cannot carry makes its input a dead letter, not the whole batch fail.
  return list.map((output) => {
    const topic = output.topic ?? settings.to;
    return { topic, message: toClientMessage(output, topic) };
  });
}

/**
 * Runs the transform over one batch, in order: one part per input. A poison input becomes one dead letter in the same
 * batch (so in the same transaction): it never blocks the partition and is never lost. Retries are immediate and in
 * memory: a transform is a pure mapping here; slow external calls belong in a consumer with its own retry policy.
 */
export async function transformBatch(settings: TransformSettings, records: readonly PipelineRecord[]): Promise<Part[]> {
  const parts: Part[] = [];
  for (const record of records) {
    for (let attempt = 1; ; attempt++) {
      try {
        parts.push({ record, items: await outputsOf(settings, record) });
        break;
      } catch (error) {
        if (attempt < settings.maxAttempts && !isPermanent(error, settings.permanent)) continue;
        parts.push(letterPart(settings, record, { error, attempts: attempt }));
        break;
      }
    }
  }
  return parts;
}
