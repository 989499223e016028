import type { BatchEventHandler, EventHandler } from '../../consumer/types.ts';
import type { Event } from '../../envelope/event.ts';
import { indexVersions, type TopicVersion, upcastEvent } from './declare.ts';

/** The declarations, checked once, as a function that up-casts one event through them. */
function upcaster(versions: readonly TopicVersion[]): (event: Event) => Event {
  const byFrom = indexVersions(versions);
  return (event) => {
    let current = event;
    for (let version = byFrom.get(current.topic); version; version = byFrom.get(current.topic)) {
      current = upcastEvent(current, version);
    }
    return current;
  };
}

/**
 * Up-casts an event read from an old topic through the given declarations (chained: v1 → v2 → v3), whatever their
 * phase; an event of any other topic is returned as it is. The result names the new topic; the handler context's
 * `record.topic` still tells where it was read.
 */
export function upcastOnReadEvent(event: Event, versions: readonly TopicVersion[]): Event {
  return upcaster(versions)(event);
}

/**
 * Wraps a handler written for the new shape so that it also takes events of the old topic: a consumer that still
 * reads `order-events` (or reads both topics during the dual-write window) sees only `order-events.v2` shapes.
 */
export function upcastOnRead(versions: readonly TopicVersion[], handler: EventHandler): EventHandler {
  const upcast = upcaster(versions);
  return (event, context) => handler(upcast(event), context);
}

/** `upcastOnRead` for a batch handler. */
export function upcastBatchOnRead(versions: readonly TopicVersion[], handler: BatchEventHandler): BatchEventHandler {
  const upcast = upcaster(versions);
  return (events, context) => handler(events.map(upcast), context);
}
