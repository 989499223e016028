// npm run boxoffice [-- --kafka] [--port 8080]
// Runs the boxoffice until Ctrl-C. Default: every service in this process on the embedded mode (PGlite and the log
// in its tables, no server). --kafka: each service in a process of its own, on Kafka (KAFKA_BROKERS, default
// 127.0.0.1:9092) and the PostgreSQL server (DATABASE_URL), the schema `boxoffice`.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { kafkaTransport, pgDb, pgliteDb, postgresTransport } from 'effectively';
import type { RunningService } from './shared/deps.ts';
import { prepareBoxoffice, type ServiceName, serviceNames, services, startBoxoffice } from './system.ts';

const { values } = parseArgs({
  options: {
    kafka: { type: 'boolean', default: false },
    service: { type: 'string' },
    port: { type: 'string', default: '8080' },
    schema: { type: 'string', default: 'boxoffice' },
  },
});
const schema = values.schema;
const order = { port: Number(values.port) };

function untilSignal(close: () => Promise<void>): void {
  const stop = () => void close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function usage(url: string): void {
  console.log(`boxoffice: order API at ${url}; try
  curl -s -XPOST ${url}/orders -H 'content-type: application/json' -H 'idempotency-key: ana-1' \\
    -d '{"showId":"finale","seats":2,"customer":{"name":"Ana","email":"ana@example.test"},"amountCents":9000}'`);
}

if (values.service !== undefined) {
  // one service of the --kafka mode, in this process
  const name = values.service as ServiceName;
  if (!serviceNames.includes(name)) throw new Error(`--service must be one of ${serviceNames.join(', ')}`);
  const db = pgDb({ max: 12 });
  const transport = kafkaTransport({ clientId: `boxoffice-${name}` });
  const service: RunningService = await services[name]({ db, transport, schema }, { order });
  if ('url' in service) usage(String(service.url));
  console.log(`boxoffice: ${name} started`);
  untilSignal(async () => {
    await service.close();
    await db.close();
  });
} else if (values.kafka) {
  const db = pgDb();
  await prepareBoxoffice({ db, transport: kafkaTransport({ clientId: 'boxoffice' }), schema });
  await db.close();
  const self = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = serviceNames.map((name) =>
    spawn(process.execPath, [...process.execArgv, self, '--service', name, '--port', values.port, '--schema', schema], {
      stdio: 'inherit',
    }),
  );
  untilSignal(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
  });
} else {
  const db = await pgliteDb();
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20 });
  const boxoffice = await startBoxoffice({ db, transport, schema }, { order });
  console.log('boxoffice: embedded (PGlite in this process, the log in its tables): no server used');
  usage(boxoffice.order.url);
  untilSignal(async () => {
    await boxoffice.close();
    await db.close();
  });
}
