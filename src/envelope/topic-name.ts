/**
 * What a topic may be called, on every transport: Kafka's rule (the strictest transport), so a name the embedded log
 * takes is never one Kafka refuses after a move to Kafka. 1 to 249 of `a-z A-Z 0-9 . _ -`, and not `.` or `..`.
 * The library's own derived names (`<topic>-retry-N`, `<topic>-dlt`) must fit too: see `derivedTopicProblem`.
 */
export const maxTopicLength = 249;

const legal = /^[a-zA-Z0-9._-]+$/;

/** Why `name` is not a valid topic name, or undefined when it is. */
export function topicNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'must be a non-empty string';
  if (name.length > maxTopicLength) return `is ${name.length} characters long (at most ${maxTopicLength})`;
  if (name === '.' || name === '..') return 'may not be `.` or `..`';
  if (!legal.test(name)) return 'may hold only ASCII letters, digits, `.`, `_` and `-`';
  return undefined;
}
