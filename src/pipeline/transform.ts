import { isPermanent, type PermanentErrors } from '../consumer/classify.ts';
import { RetryHeaders } from '../consumer/retry-topics.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
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

export interface TransformedBatch {
  items: { topic: string; message: ClientMessage }[];
  outputs: number;
  deadLettered: number;
}

const maxText = 2000;

/** The input as it came, with the dead-letter headers the rest of the library reads (`effectively dlq`, redrive). */
function deadLetter(record: PipelineRecord, error: unknown, attempts: number): ClientMessage {
  const failure = error instanceof Error ? error : new Error(String(error));
  const headers: Record<string, Buffer> = { ...record.headers };
  const text = (name: string, value: string) => {
    headers[name] = Buffer.from(value.slice(0, maxText), 'utf8');
  };
  text(RetryHeaders.originalTopic, record.topic);
  text(RetryHeaders.originalPartition, String(record.partition));
  text(RetryHeaders.originalOffset, record.offset);
  text(RetryHeaders.originalTimestamp, String(record.timestamp));
  text(RetryHeaders.firstFailedAt, String(Date.now()));
  text(RetryHeaders.attempt, String(attempts));
  text(RetryHeaders.errorClass, failure.name);
  text(RetryHeaders.errorCode, error instanceof EffectivelyError ? error.code : ErrorCodes.EFF_HANDLER_FAILED);
  text(RetryHeaders.errorMessage, failure.message);
  text(RetryHeaders.errorStack, failure.stack ?? '');
  return { key: record.key, value: record.value, headers };
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
 * Runs the transform over one batch, in order. A poison input becomes one dead letter in the same batch (so in the
 * same transaction): it never blocks the partition and is never lost. Retries are immediate and in memory: a
 * transform is a pure mapping here; slow external calls belong in a consumer with its own retry policy.
 */
export async function transformBatch(
  settings: TransformSettings,
  records: readonly PipelineRecord[],
): Promise<TransformedBatch> {
  const batch: TransformedBatch = { items: [], outputs: 0, deadLettered: 0 };
  for (const record of records) {
    for (let attempt = 1; ; attempt++) {
      try {
        const items = await outputsOf(settings, record);
        batch.items.push(...items);
        batch.outputs += items.length;
        break;
      } catch (error) {
        if (attempt < settings.maxAttempts && !isPermanent(error, settings.permanent)) continue;
        batch.items.push({ topic: settings.deadLetterTopic(record), message: deadLetter(record, error, attempt) });
        batch.deadLettered += 1;
        break;
      }
    }
  }
  return batch;
}
