import { RetryHeaders } from '../consumer/retry-topics.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { ClientMessage } from './messages.ts';
import type { PipelineRecord } from './types.ts';

/**
 * How much of its input a dead letter carries: all of it; the input without its value; or only the dead-letter
 * headers (no value, no key, none of the input's own headers). A letter the dead-letter topic refuses as too large
 * is written again with the next, smaller form, and says what it left out.
 */
export type LetterForm = 'whole' | 'no-value' | 'headers-only';
const smaller: Record<LetterForm, LetterForm | undefined> = {
  whole: 'no-value',
  'no-value': 'headers-only',
  'headers-only': undefined,
};

/** Why an input became a dead letter: its transform's error, or a refusal of what it was to write. */
export interface LetterCause {
  error: unknown;
  attempts: number;
  /** The code to record; default the error's `EFF_*` code, or `EFF_HANDLER_FAILED`. */
  code?: string;
}

const maxText = 2000;

/** The next smaller form, or undefined when nothing more can be left out. */
export function smallerForm(form: LetterForm): LetterForm | undefined {
  return smaller[form];
}

function dropped(record: PipelineRecord, form: LetterForm): string | undefined {
  if (form === 'whole') return undefined;
  const parts = [`value (${record.value?.length ?? 0} bytes)`];
  if (form === 'headers-only') {
    parts.push(`key (${record.key?.length ?? 0} bytes)`);
    const names = Object.keys(record.headers);
    if (names.length > 0) parts.push(`headers (${names.join(', ')})`);
  }
  return parts.join(', ');
}

/**
 * The input as it came (or what of it `form` keeps), with the dead-letter headers the rest of the library reads
 * (`effectively dlq`, redrive) and, when something was left out, `effectively-dropped` saying what.
 */
export function deadLetter(record: PipelineRecord, cause: LetterCause, form: LetterForm = 'whole'): ClientMessage {
  const { error } = cause;
  const failure = error instanceof Error ? error : new Error(String(error));
  const headers: Record<string, Buffer> = form === 'headers-only' ? {} : { ...record.headers };
  const text = (name: string, value: string) => {
    headers[name] = Buffer.from(value.slice(0, maxText), 'utf8');
  };
  text(RetryHeaders.originalTopic, record.topic);
  text(RetryHeaders.originalPartition, String(record.partition));
  text(RetryHeaders.originalOffset, record.offset);
  text(RetryHeaders.originalTimestamp, String(record.timestamp));
  text(RetryHeaders.firstFailedAt, String(Date.now()));
  text(RetryHeaders.attempt, String(cause.attempts));
  text(RetryHeaders.errorClass, failure.name);
  text(
    RetryHeaders.errorCode,
    cause.code ?? (error instanceof EffectivelyError ? error.code : ErrorCodes.EFF_HANDLER_FAILED),
  );
  text(RetryHeaders.errorMessage, failure.message);
  text(RetryHeaders.errorStack, form === 'whole' ? (failure.stack ?? '') : '');
  const what = dropped(record, form);
  if (what !== undefined) text(RetryHeaders.dropped, what);
  return {
    key: form === 'headers-only' ? null : record.key,
    value: form === 'whole' ? record.value : null,
    headers,
  };
}
