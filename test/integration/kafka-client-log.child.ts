// Child of kafka-client-log.test.ts: Kafka clients aimed at a closed port (127.0.0.1:1), so the parent can read what
// reaches this process's stderr. Prints the lines each capturing Logger received as one JSON object on stdout.
import type { Logger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';

type Line = { level: string; message: string; fields?: Record<string, unknown> };

function capture(lines: Line[]): Logger {
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const brokers = ['127.0.0.1:1'];
const limited: Line[] = [];
const naive: Line[] = [];
const transports: Transport[] = [
  // An hour: no interval passes during this run, so every repeat must be suppressed.
  kafkaTransport({ brokers, logger: capture(limited), clientLogIntervalMs: 3_600_000 }),
  // The naive twin: no limit, every line the client produced.
  kafkaTransport({ brokers, logger: capture(naive), clientLogIntervalMs: 0 }),
  // No logger: the default one, which writes JSON lines to stderr.
  kafkaTransport({ brokers }),
];

// Several clients per transport, as an application has (relay, consumers, admin): each one fails alike. Creating a
// topic makes each admin client try the broker until its request times out (5 s).
const admins = transports.flatMap((transport) => [transport.admin(), transport.admin(), transport.admin()]);
await Promise.all(
  admins.map((admin) => admin.createTopics([{ topic: 'never', partitions: 1 }]).catch(() => undefined)),
);
await Promise.all(admins.map((admin) => admin.close().catch(() => undefined)));
process.stdout.write(`${JSON.stringify({ limited, naive })}\n`);
