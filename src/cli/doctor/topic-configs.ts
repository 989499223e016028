// A topic's broker-side configuration (`retention.ms`), read with Kafka's DescribeConfigs request. The Kafka client
// the library uses (@confluentinc/kafka-javascript 1.x) has no describeConfigs in its admin (its KafkaJS-shaped
// admin offers topics, groups, offsets and metadata only), so this sends the one request itself over a plain TCP
// connection to the first broker: version 1, which every broker from Kafka 1.1 to 4.x answers (4.0 dropped v0).
// A cluster that wants TLS or SASL does not answer it; the doctor then says it could not read the configuration.
import { connect, type Socket } from 'node:net';

const describeConfigs = { apiKey: 32, version: 1 };
const topicResource = 2;

function str(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const length = Buffer.alloc(2);
  length.writeInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function int(bytes: number, value: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  if (bytes === 1) buffer.writeInt8(value);
  else if (bytes === 2) buffer.writeInt16BE(value);
  else buffer.writeInt32BE(value);
  return buffer;
}

function request(topics: readonly string[], names: readonly string[], correlationId: number): Buffer {
  const body = Buffer.concat([
    int(2, describeConfigs.apiKey),
    int(2, describeConfigs.version),
    int(4, correlationId),
    str('effectively-doctor'),
    int(4, topics.length),
    ...topics.flatMap((topic) => [int(1, topicResource), str(topic), int(4, names.length), ...names.map(str)]),
    int(1, 0), // include_synonyms: false
  ]);
  return Buffer.concat([int(4, body.length), body]);
}

/** A reader over a response; every read is bounds-checked by Buffer (a short answer throws a RangeError). */
class Reader {
  #at = 0;
  constructor(readonly buffer: Buffer) {}
  #take(bytes: number): number {
    const at = this.#at;
    this.#at += bytes;
    return at;
  }
  int8(): number {
    return this.buffer.readInt8(this.#take(1));
  }
  int16(): number {
    return this.buffer.readInt16BE(this.#take(2));
  }
  int32(): number {
    return this.buffer.readInt32BE(this.#take(4));
  }
  string(): string | null {
    const length = this.int16();
    if (length < 0) return null;
    const at = this.#take(length);
    if (at + length > this.buffer.length) throw new RangeError('the broker answer is cut short');
    return this.buffer.toString('utf8', at, at + length);
  }
}

export interface TopicConfig {
  topic: string;
  /** The configuration entries asked for (null value: the broker keeps it secret or has none). */
  configs: Map<string, string | null>;
  /** The broker's error for this topic (`UNKNOWN_TOPIC_OR_PARTITION`...), as its code and message. */
  error?: string;
}

function parse(response: Buffer, correlationId: number): TopicConfig[] {
  const reader = new Reader(response);
  if (reader.int32() !== correlationId) throw new Error('the broker answered another request');
  reader.int32(); // throttle_time_ms
  const results: TopicConfig[] = [];
  for (let n = reader.int32(); n > 0; n--) {
    const errorCode = reader.int16();
    const errorMessage = reader.string();
    reader.int8(); // resource_type
    const topic = reader.string() ?? '';
    const configs = new Map<string, string | null>();
    for (let c = reader.int32(); c > 0; c--) {
      const name = reader.string() ?? '';
      configs.set(name, reader.string());
      reader.int8(); // read_only
      reader.int8(); // config_source
      reader.int8(); // is_sensitive
      for (let s = reader.int32(); s > 0; s--) {
        reader.string();
        reader.string();
        reader.int8();
      }
    }
    results.push({
      topic,
      configs,
      ...(errorCode === 0 ? {} : { error: `Kafka error ${errorCode}${errorMessage ? `: ${errorMessage}` : ''}` }),
    });
  }
  return results;
}

function exchange(socket: Socket, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) resolve(received.subarray(4));
    });
    socket.on('error', reject);
    socket.on('timeout', () => reject(new Error('the broker did not answer in time')));
    socket.on('close', () => reject(new Error('the broker closed the connection before answering')));
    socket.write(payload);
  });
}

/** The `names` configuration entries of `topics`, from `broker` (`host:port`). */
export async function topicConfigs(
  broker: string,
  topics: readonly string[],
  names: readonly string[],
  timeoutMs = 5000,
): Promise<TopicConfig[]> {
  if (topics.length === 0) return [];
  const at = broker.lastIndexOf(':');
  const socket = connect({ host: broker.slice(0, at), port: Number(broker.slice(at + 1)) });
  socket.setTimeout(timeoutMs);
  try {
    const correlationId = 1;
    return parse(await exchange(socket, request(topics, names, correlationId)), correlationId);
  } finally {
    socket.destroy();
  }
}
