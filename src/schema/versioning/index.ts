// Topic versioning: an incompatible change of an event moves to a new topic (`order-events` → `order-events.v2`)
// through the phases v1-only → dual-write → v2-only. See docs/schema-evolution.md, "Topic versioning".
export {
  declareTopicVersion,
  indexVersions,
  type TopicPhase,
  type TopicVersion,
  type TopicVersionInput,
  topicPhases,
  type Upcast,
  type Upcaster,
  upcastEvent,
} from './declare.ts';
export { enqueueVersioned, expandForVersions, versionExpander } from './expand.ts';
export { upcastBatchOnRead, upcastOnRead, upcastOnReadEvent } from './read.ts';
