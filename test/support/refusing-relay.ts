// The relay tests about refused rows share these: events padded to a size a small topic refuses, and a started poller
// that collects what it sets aside.
import type { TestContext } from 'node:test';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createRelay, type RefusedEvent } from '../../src/outbox/relay.ts';
import type { Relay, RelayOptions } from '../../src/outbox/relay-options.ts';

/** Events of `topic`: key, `data.n`, and `pad` bytes of padding (a row the topic refuses for its size). */
export const paddedEvents =
  (topic: string) =>
  (key: string, n: number, pad = 0): Event =>
    createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });

/**
 * A poller of `schema` (retrying after 100 ms, silent), started and closed after the test; `refused` fills with the rows
 * it sets aside.
 */
export async function refusingRelay(
  t: TestContext,
  options: Pick<RelayOptions, 'db' | 'schema' | 'producerFactory'> & Partial<RelayOptions>,
): Promise<{ relay: Relay; refused: RefusedEvent[] }> {
  const refused: RefusedEvent[] = [];
  const relay = createRelay({
    errorBackoffMs: 100,
    logger: silentLogger,
    onRefused: (row) => refused.push(row),
    ...options,
  });
  t.after(() => relay.close());
  await relay.start();
  return { relay, refused };
}
