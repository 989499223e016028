import { librarySchema } from '../db/identifiers.ts';
import { rethrowNotMigrated } from '../db/not-migrated.ts';
import type { Queryable } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';
import { type ContentModes, encodeEventAs, modeFor } from '../envelope/cloudevents.ts';
import type { Event } from '../envelope/event.ts';
import { assertValidEvent } from '../envelope/event.ts';
import { invalidOptions } from '../errors.ts';
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
  return {
    async enqueue(tx, input) {
      const given = Array.isArray(input) ? (input as readonly Event[]) : [input as Event];
      const events = options.expand ? options.expand(given) : given;
      if (events.length === 0) return;
      const ids: string[] = [];
      const topics: string[] = [];
      const keys: string[] = [];
      const shardList: number[] = [];
      const headers: string[] = [];
      const payloads: (Buffer | null)[] = [];
      for (const event of events) {
        assertValidEvent(event); // built by hand, or by an upcaster: the same rules as createEvent
        const encoding = options.serde ? await encodingOf(options.serde, event) : undefined;
        const record = encodeEventAs(event, modeFor(options.modes, event.topic), encoding);
        ids.push(event.id);
        topics.push(record.topic);
        keys.push(event.key);
        shardList.push(shardOf(event.key, shards));
        headers.push(JSON.stringify(record.headers));
        payloads.push(record.value);
      }
      // the caller's own transaction: a schema never migrated says so here too (EFF_NOT_MIGRATED)
      const { rows } = await tx
        .query<{ stored: string | null }>(insert, [ids, topics, keys, shardList, headers, payloads, shards])
        .catch(rethrowNotMigrated);
      // Checked in the insert itself against the count the first relay stored (none yet: nothing to check).
      const stored = rows[0]?.stored ?? null;
      if (stored !== null && stored !== String(shards)) throw shardsMismatch(schema, shards, stored);
      if (notify) await tx.query('SELECT pg_notify($1, NULL)', [channel]);
    },
  };
}
