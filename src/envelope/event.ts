import { EffectivelyError, ErrorCodes } from '../errors.ts';
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

function requireText(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, `event \`${field}\` must be a non-empty string`, {
      details: { field },
    });
  }
  return value;
}

/** Builds an event, giving it its one and only id. */
export function createEvent<T>(input: NewEvent<T>): Event<T> {
  const id = input.id ?? uuidv7();
  if (!isUuid(id)) {
    // The outbox keeps its rows under a uuid id; consumers accept any non-empty id from other producers.
    throw new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, `event id \`${id}\` is not a UUID (the outbox needs one)`);
  }
  if (input.version !== undefined && !Number.isSafeInteger(input.version)) {
    throw new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, 'event `version` must be a safe integer');
  }
  const time = input.time instanceof Date ? input.time.toISOString() : (input.time ?? new Date().toISOString());
  return {
    id: id.toLowerCase(),
    topic: requireText('topic', input.topic),
    type: requireText('type', input.type),
    source: requireText('source', input.source),
    key: requireText('key', input.key),
    ...(input.version === undefined ? {} : { version: input.version }),
    time,
    data: input.data,
    ...(input.headers === undefined ? {} : { headers: { ...input.headers } }),
  };
}
