// The three boxoffice scenarios, short, on the real Kafka broker and PostgreSQL server (topics and a schema of each
// run's own). Their naive twin runs embedded (scenarios-embedded.test.ts): the audit is the same.
import { test } from 'node:test';
import { storyNames } from '../../scenarios/boxoffice/stories.ts';
import { assertClean, runShort } from './scenarios-support.ts';

for (const name of storyNames) {
  test(`${name}, short, on Kafka: nothing lost or doubled`, async () => {
    assertClean(await runShort(name, 'kafka'), name);
  });
}
