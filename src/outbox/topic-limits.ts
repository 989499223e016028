import { invalidOptions } from '../errors.ts';

/** Kafka's default `max.message.bytes` (a topic's, and the broker's `message.max.bytes`). */
export const kafkaDefaultMaxMessageBytes = 1_048_588;

/**
 * Bytes the broker counts beyond a row's payload, key and headers, with a margin: a batch of one record has 61 bytes
 * of batch header and at most 36 of record overhead (lengths, attributes, deltas as varints), and each header up to
 * 10 bytes of varints. 1 KiB more covers the rest (a wider estimate only sends a row alone that did not need it).
 */
const overheadBytes = 61 + 36 + 1024;

export interface SizedRow {
  topic: string;
  key: string;
  /** Payload bytes. */
  size: number | string;
  headers?: Record<string, string>;
}

/**
 * The relay's idea of each topic's `max.message.bytes`: the `maxMessageBytes` option (one number for every topic, or
 * one per topic with `'*'` for the others; default Kafka's 1,048,588), lowered for a topic when the broker refuses one
 * of its rows as too large. The Kafka client cannot read a topic's configuration (no DescribeConfigs in its admin), so
 * a limit lower than the option is learned from the first refusal. A refusal only says the limit is below the refused
 * row: from then on, a row of that topic may be over it unless a row at least as big was acknowledged there.
 */
export interface TopicLimits {
  /** Whether the row's record may be over its topic's limit: the broker may refuse it for its size. */
  mayBeOver(row: SizedRow): boolean;
  /** A row the broker refused for its size: its topic's limit is below its record's size. */
  refusedForSize(row: SizedRow): void;
  /** Rows the broker acknowledged: their topics take records of their size. */
  acknowledged(rows: readonly SizedRow[]): void;
}

export function topicLimits(option: number | Readonly<Record<string, number>> | undefined): TopicLimits {
  const given =
    typeof option === 'number' || option === undefined ? { '*': option ?? kafkaDefaultMaxMessageBytes } : option;
  for (const [topic, limit] of Object.entries(given)) {
    if (!(Number.isSafeInteger(limit) && limit > 0)) {
      throw invalidOptions('maxMessageBytes', `a positive integer of bytes (topic ${topic}: ${String(limit)})`);
    }
  }
  // Topics that refused a row for its size: the largest record acknowledged there since (0: none yet).
  const refusedOn = new Map<string, number>();
  const limitOf = (topic: string) => given[topic] ?? given['*'] ?? kafkaDefaultMaxMessageBytes;
  return {
    mayBeOver(row) {
      const bytes = recordBytes(row);
      const known = refusedOn.get(row.topic);
      // Two estimates of the same margin: a row estimated no bigger than one acknowledged is taken as fitting (their
      // true sizes may differ by the estimate's varint slack, some 30 bytes and 8 a header, left as it is: a margin
      // here would send every row of a key as big as the largest acknowledged one alone).
      return known === undefined ? bytes > limitOf(row.topic) : bytes > known;
    },
    refusedForSize(row) {
      // A record acknowledged as big as this one: the topic's limit was lowered since, none acknowledged is trusted.
      const known = refusedOn.get(row.topic);
      refusedOn.set(row.topic, known !== undefined && known < recordBytes(row) ? known : 0);
    },
    acknowledged(rows) {
      if (refusedOn.size === 0) return;
      for (const row of rows) {
        const known = refusedOn.get(row.topic);
        if (known === undefined) continue;
        const bytes = recordBytes(row);
        if (bytes > known) refusedOn.set(row.topic, bytes);
      }
    },
  };
}

/** About the bytes the broker counts for a batch holding only this row (never fewer). */
export function recordBytes(row: SizedRow): number {
  let bytes = overheadBytes + Number(row.size) + Buffer.byteLength(row.key, 'utf8');
  for (const name in row.headers) bytes += 10 + Buffer.byteLength(name, 'utf8') + Buffer.byteLength(row.headers[name]!);
  return bytes;
}

/**
 * Where to cut a send so that no later row of a key travels beside an earlier row of the key that the broker may
 * refuse for its size: the index just after the first such row that has a later row of its key in `rows`, or
 * undefined (no cut). The client may put the two in separate batches of one send, the broker refuse the first and
 * write the second; the relay would then find the later row on the topic ahead of the refused one.
 */
export function cutAfterOversized(rows: readonly SizedRow[], limits: TopicLimits): number | undefined {
  const lastOfKey = new Map<string, number>();
  for (const [index, row] of rows.entries()) lastOfKey.set(row.key, index);
  for (const [index, row] of rows.entries()) {
    if (index === rows.length - 1) return undefined;
    if (lastOfKey.get(row.key)! > index && limits.mayBeOver(row)) return index + 1;
  }
  return undefined;
}
