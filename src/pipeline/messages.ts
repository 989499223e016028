import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { PipelineOutput } from './types.ts';

export interface ClientMessage {
  key: Buffer | null;
  value: Buffer | null;
  partition?: number;
  headers: Record<string, Buffer>;
}

export interface TopicMessages {
  topic: string;
  messages: ClientMessage[];
}

/** Strings reach librdkafka as C strings (cut at NUL): keys and header values go as bytes. */
function bytes(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

/** Refuses (EFF_INVALID_EVENT) what Kafka cannot carry, so the caller can dead-letter the input that made it. */
export function toClientMessage(output: PipelineOutput, topic: string): ClientMessage {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(output.headers ?? {})) {
    if (name.includes('\u0000')) {
      throw new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, 'an output header name holds a NUL byte', {
        details: { topic, header: name.replaceAll('\u0000', '\\0') },
      });
    }
    headers[name] = bytes(value);
  }
  const partition = output.partition;
  if (partition !== undefined && !(Number.isInteger(partition) && partition >= 0)) {
    throw new EffectivelyError(
      ErrorCodes.EFF_INVALID_EVENT,
      `output partition must be an integer >= 0, got ${partition}`,
      {
        details: { topic },
      },
    );
  }
  return {
    key: output.key === null ? null : bytes(output.key),
    value: output.value === null ? null : bytes(output.value),
    headers,
    ...(partition === undefined ? {} : { partition }),
  };
}

/** In the order given, per topic (the client keeps each topic's order; per partition the broker keeps it). */
export function byTopic(items: readonly { topic: string; message: ClientMessage }[]): TopicMessages[] {
  const topics = new Map<string, ClientMessage[]>();
  for (const { topic, message } of items) {
    const messages = topics.get(topic) ?? [];
    if (messages.length === 0) topics.set(topic, messages);
    messages.push(message);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}
