import { librarySchema } from '../db/identifiers.ts';
import { rethrowNotMigrated } from '../db/not-migrated.ts';
import type { Queryable } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';
import { type ContentModes, encodeEventAs, modeFor } from '../envelope/cloudevents.ts';
import type { Event } from '../envelope/event.ts';
import { assertValidEvent } from '../envelope/event.ts';
import { invalidOptions } from '../errors.ts';
import { type SendSpans, startSendSpans } from '../observability/trace-outbox.ts';
import { encodingOf } from '../schema/serde/envelope.ts';
import type { Serde } from '../schema/serde/serde.ts';
import { defaultShards, shardOf } from './shard.ts';
import { shardsMismatch } from './shards-setting.ts';

export interface OutboxOptions {
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /**
   * Key shards; must equal the relays' `shards` (default 16). The first relay start stores it in the schema; an
   * enqueue with another count then fails with EFF_INVALID_OPTIONS (see `changeShards`).
   */
  shards?: number;
  /** Send a NOTIFY with each enqueue so relays wake at once (default true; relays also poll). */
  notify?: boolean;
  /** CloudEvents mode per topic: `binary` (`ce_*` headers, the default) or `structured` (`application/cloudevents+json`). */
  modes?: ContentModes;
  /**
   * Writes each event's data with this serde (Avro or JSON Schema in the registry's wire format, `datacontenttype` and
   * `dataschema` set from it) instead of plain JSON. Data the schema refuses fails the enqueue, so the caller's transaction.
   */
  serde?: Serde;
  /**
   * Rewrites the events of each enqueue before they are written, in the caller's transaction: a plug-in such as topic
   * versioning's `versionExpander(versions)` (during a dual-write window the event goes to the old topic and its
   * up-cast copy to the new one, with the same id). It may throw to refuse an enqueue.
   */
  expand?: (events: readonly Event[]) => readonly Event[];
}

export interface Outbox {
  /** Writes events in the caller's transaction: they are published if and only if that transaction commits. */
  enqueue(tx: Queryable, events: Event | readonly Event[]): Promise<void>;
}

export function notifyChannel(schema: string): string {
  return `${schema}_outbox`;
}

export function createOutbox(options: OutboxOptions = {}): Outbox {
  const schema = librarySchema(options.schema);
  const shards = options.shards ?? defaultShards;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  const notify = options.notify ?? true;
  const insert = loadSql(import.meta.url, 'enqueue.sql', schema);
  const channel = notifyChannel(schema);
  /** The insert's columns for `events`, each row's headers carrying its `send` span's context when there is one. */
  async function columnsOf(events: readonly Event[], spans: SendSpans | undefined) {
    const columns = {
      ids: [] as string[],
      topics: [] as string[],
      keys: [] as string[],
      shards: [] as number[],
      headers: [] as string[],
      payloads: [] as (Buffer | null)[],
    };
    for (const [index, event] of events.entries()) {
      const encoding = options.serde ? await encodingOf(options.serde, event) : undefined;
      const record = encodeEventAs(event, modeFor(options.modes, event.topic), encoding);
      columns.ids.push(event.id);
      columns.topics.push(record.topic);
      columns.keys.push(event.key);
      columns.shards.push(shardOf(event.key, shards));
      columns.headers.push(JSON.stringify(spans ? { ...record.headers, ...spans.headers(index) } : record.headers));
      columns.payloads.push(record.value);
    }
    return columns;
  }

  return {
    async enqueue(tx, input) {
      const given = Array.isArray(input) ? (input as readonly Event[]) : [input as Event];
      const events = options.expand ? options.expand(given) : given;
      if (events.length === 0) return;
      for (const event of events) assertValidEvent(event); // built by hand, or by an upcaster: the same rules as createEvent
      // A `send` span per event; its context travels in the row as `traceparent` (none without OpenTelemetry).
      const spans = startSendSpans(events);
      let stored: string | null;
      try {
        const c = await columnsOf(events, spans);
        // the caller's own transaction: a schema never migrated says so here too (EFF_NOT_MIGRATED)
        const { rows } = await tx
          .query<{ stored: string | null }>(insert, [c.ids, c.topics, c.keys, c.shards, c.headers, c.payloads, shards])
          .catch(rethrowNotMigrated);
        // Checked in the insert itself against the count the first relay stored (none yet: nothing to check).
        stored = rows[0]?.stored ?? null;
      } catch (error) {
        spans?.end(error);
        throw error;
      }
      spans?.end();
      if (stored !== null && stored !== String(shards)) throw shardsMismatch(schema, shards, stored);
      // a column of type void is more than some drivers can read (Prisma's raw queries): select a number instead
      if (notify) await tx.query('SELECT 1 AS notified FROM pg_notify($1, NULL)', [channel]);
    },
  };
}
