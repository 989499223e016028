import { isStorable, storableText } from '../db/storable.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { topicNameProblem } from './topic-name.ts';
import { isUuid, uuidv7 } from './uuidv7.ts';

/**
 * One fact, born once. The id is created with the event and carried unchanged through relays, retries and redrives;
 * with the source it is the event's identity (CloudEvents: source + id), which consumers deduplicate on (the dedup key,
 * see `identity.ts` and docs/cloudevents.md).
 */
export interface Event<T = unknown> {
  /**
   * The CloudEvents id: any non-empty string, unique per source. `createEvent` makes a UUIDv7; events from other
   * producers carry theirs (`order-2026-000123`, `evt_…`) unchanged; a UUID is shown in lowercase.
   */
  readonly id: string;
  /** Destination topic. */
  readonly topic: string;
  /** What happened, e.g. `boxoffice.order.confirmed`. */
  readonly type: string;
  /** Who said so, e.g. `/boxoffice/orders`. */
  readonly source: string;
  /** Partition key: all events of one key stay in order (e.g. the order id). */
  readonly key: string;
  /** Optional version, monotonic per key, taken from the source of truth (used by version guards). */
  readonly version?: number;
  /** ISO-8601 time of the fact. */
  readonly time: string;
  readonly data: T;
  /** Extra headers carried as they are. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface NewEvent<T = unknown> {
  topic: string;
  type: string;
  source: string;
  key: string;
  data: T;
  version?: number;
  id?: string;
  time?: Date | string;
  headers?: Record<string, string>;
}

function invalid(message: string, field: string): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, message, { details: { field } });
}

/** Non-empty text a text or jsonb column (the outbox) and a Kafka header can hold: no NUL, no lone surrogate. */
function requireText(field: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0)
    throw invalid(`event \`${field}\` must be a non-empty string`, field);
  if (!isStorable(value)) {
    throw invalid(
      `event \`${field}\` holds a NUL character or a lone UTF-16 surrogate (not storable, not UTF-8 text)`,
      field,
    );
  }
}

function requireTopic(value: unknown): void {
  const problem = topicNameProblem(value);
  if (problem !== undefined) {
    throw invalid(
      `event \`topic\` ${storableText(JSON.stringify(String(value)).slice(0, 300))} ${problem} (Kafka's rule, on every transport)`,
      'topic',
    );
  }
}

function requireHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    requireText(`headers[${JSON.stringify(storableText(name))}]`, name);
    if (typeof value !== 'string' || !isStorable(value)) {
      throw invalid(
        `event header \`${storableText(name)}\` must be a string without NUL or lone surrogates`,
        'headers',
      );
    }
  }
}

/** Builds an event, giving it its one and only id. */
export function createEvent<T>(input: NewEvent<T>): Event<T> {
  const time = input.time instanceof Date ? input.time.toISOString() : (input.time ?? new Date().toISOString());
  const id = input.id ?? uuidv7();
  const event: Event<T> = {
    id: typeof id === 'string' ? id.toLowerCase() : id,
    topic: input.topic,
    type: input.type,
    source: input.source,
    key: input.key,
    ...(input.version === undefined ? {} : { version: input.version }),
    time,
    data: input.data,
    ...(input.headers === undefined ? {} : { headers: { ...input.headers } }),
  };
  assertValidEvent(event);
  return event;
}

/**
 * Checks what an event must be to be stored in the outbox and published on any transport: a UUID id, a topic name
 * Kafka accepts, non-empty storable text for type, source and key, an integer version, storable headers. Throws
 * `EFF_INVALID_EVENT` naming the field. `createEvent` and the outbox's `enqueue` run it.
 */
export function assertValidEvent(event: Event): void {
  if (typeof event.id !== 'string' || !isUuid(event.id)) {
    // The outbox keeps its rows under a uuid id; consumers accept any non-empty id from other producers.
    throw invalid(`event id \`${storableText(String(event.id))}\` is not a UUID (the outbox needs one)`, 'id');
  }
  if (event.version !== undefined && !Number.isSafeInteger(event.version)) {
    throw invalid('event `version` must be a safe integer', 'version');
  }
  requireTopic(event.topic);
  requireText('type', event.type);
  requireText('source', event.source);
  requireText('key', event.key);
  if (event.headers !== undefined) requireHeaders(event.headers);
}
