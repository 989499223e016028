/** Subject name strategies: which registry subject a topic's values are registered under. */
import { invalidOptions } from '../../errors.ts';

/** A function from the topic and the schema's record name (Avro full name, JSON Schema `title`) to a subject. */
export type SubjectNameFunction = (topic: string, recordName: string | undefined) => string;

/**
 * `topic` (`<topic>-value`, Confluent's TopicNameStrategy, the default), `record` (the record's full name:
 * RecordNameStrategy, one subject for the type across topics), `topic-record` (`<topic>-<record name>`:
 * TopicRecordNameStrategy), or a function.
 */
export type SubjectStrategy = 'topic' | 'record' | 'topic-record' | SubjectNameFunction;

function recordNameOf(recordName: string | undefined, strategy: string): string {
  if (!recordName) {
    throw invalidOptions(
      'subject',
      `the ${strategy} strategy needs a named schema (an Avro record, a JSON Schema title)`,
    );
  }
  return recordName;
}

export function subjectNameFunction(strategy: SubjectStrategy = 'topic'): SubjectNameFunction {
  if (typeof strategy === 'function') return strategy;
  switch (strategy) {
    case 'topic':
      return (topic) => `${topic}-value`;
    case 'record':
      return (_topic, recordName) => recordNameOf(recordName, 'record');
    case 'topic-record':
      return (topic, recordName) => `${topic}-${recordNameOf(recordName, 'topic-record')}`;
    default:
      throw invalidOptions('subject', 'must be topic, record, topic-record or a function');
  }
}
