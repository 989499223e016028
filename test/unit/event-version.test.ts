// One rule for the event's version in both content modes: an empty ce_version header is not version 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { encodeStructured } from '../../src/envelope/structured.ts';
import { parseVersion } from '../../src/envelope/version.ts';
import type { IncomingRecord, OutgoingRecord } from '../../src/transport/port.ts';

function asIncoming(record: OutgoingRecord): IncomingRecord {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = Buffer.from(value);
  return {
    topic: record.topic,
    partition: 0,
    offset: '0',
    key: record.key === null ? null : Buffer.from(record.key),
    value: record.value === null ? null : Buffer.from(record.value),
    headers,
    timestamp: Date.now(),
  } as IncomingRecord;
}

const event = createEvent({ topic: 't', type: 'x', source: '/s', key: 'k', data: { a: 1 } });

/** The same version text, sent once as binary mode's header and once as a structured document's string. */
function decodeBoth(text: string): [number | undefined | string, number | undefined | string] {
  const binary = asIncoming(encodeEvent(event));
  binary.headers.ce_version = Buffer.from(text);
  const document = JSON.parse(Buffer.from(encodeStructured(event).value as Uint8Array).toString('utf8'));
  const structured = asIncoming({
    ...encodeStructured(event),
    value: Buffer.from(JSON.stringify({ ...document, version: text })),
  });
  const outcome = (record: IncomingRecord) => {
    try {
      return decodeEvent(record).version;
    } catch (error) {
      return (error as { code?: string }).code ?? 'thrown';
    }
  };
  return [outcome(binary), outcome(structured)];
}

test('binary and structured mode read a version the same way; an empty one is refused, not version 0', () => {
  for (const bad of ['', ' 2', '2 ', '1e3', '0x10', '2.0', '+2', '9007199254740993', 'v2']) {
    assert.deepEqual(decodeBoth(bad), ['EFF_INVALID_EVENT', 'EFF_INVALID_EVENT'], JSON.stringify(bad));
  }
  for (const [good, value] of [
    ['0', 0],
    ['42', 42],
    ['-1', -1],
  ] as const) {
    assert.deepEqual(decodeBoth(good), [value, value], good);
  }
});

test('parseVersion: absent, integers and digit strings; everything else refused', () => {
  assert.equal(parseVersion(undefined), undefined);
  assert.equal(parseVersion(7), 7);
  assert.equal(parseVersion('7'), 7);
  assert.equal(parseVersion(1.5), null);
  assert.equal(parseVersion(''), null);
  assert.equal(parseVersion(null), null);
  assert.equal(parseVersion(true), null);
});
