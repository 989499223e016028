// npm run boxoffice [-- --kafka] [--port 8080]
// Runs the boxoffice until Ctrl-C, with the reference e-mail and payment providers. Default: every service in this
// process on the embedded mode (PGlite and the log in its tables, no server). --kafka: each service in a process of
// its own, on Kafka (KAFKA_BROKERS, default 127.0.0.1:9092) and the PostgreSQL server (DATABASE_URL), schema `boxoffice`.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { kafkaTransport, pgDb, pgliteDb, postgresTransport } from 'effectively';
import { startEmailProvider } from '../email-provider/server.ts';
import { startPaymentProvider } from '../payment-provider/server.ts';
import { parseMainArgs, serviceArgs } from './main-args.ts';
import type { RunningService } from './shared/deps.ts';
import {
  type BoxofficeOptions,
  prepareBoxoffice,
  type ServiceName,
  serviceNames,
  services,
  startBoxoffice,
} from './system.ts';

const values = parseMainArgs();
// One schema for the whole boxoffice: the services' tables and the library's (outbox, dedup rows, effects...).
const schema = 'boxoffice';

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

/** The providers' URLs: given, or reference providers started in this process. */
async function providers(): Promise<{ emailUrl: string; paymentUrl: string; close(): Promise<void> }> {
  const email = values['email-url'] ? undefined : await startEmailProvider();
  const payment = values['payment-url'] ? undefined : await startPaymentProvider();
  return {
    emailUrl: values['email-url'] ?? email!.url,
    paymentUrl: values['payment-url'] ?? payment!.url,
    async close() {
      await email?.close();
      await payment?.close();
    },
  };
}

const optionsFor = (urls: { emailUrl: string; paymentUrl: string }): BoxofficeOptions => ({
  order: { port: Number(values.port) },
  notification: { emailUrl: urls.emailUrl },
  payment: { providerUrl: urls.paymentUrl },
});

if (values.service !== undefined) {
  // one service of the --kafka mode, in this process
  const name = values.service as ServiceName;
  if (!serviceNames.includes(name)) throw new Error(`--service must be one of ${serviceNames.join(', ')}`);
  const db = pgDb({ max: 12 });
  const transport = kafkaTransport({ clientId: `boxoffice-${name}` });
  const urls = { emailUrl: values['email-url'] ?? '', paymentUrl: values['payment-url'] ?? '' };
  const service: RunningService = await services[name]({ db, transport, schema }, optionsFor(urls));
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
  const urls = await providers();
  console.log(`boxoffice: e-mail provider at ${urls.emailUrl}, payment provider at ${urls.paymentUrl}`);
  const self = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = serviceNames.map((name) =>
    spawn(process.execPath, [...process.execArgv, self, ...serviceArgs(name, values.port, urls)], { stdio: 'inherit' }),
  );
  untilSignal(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    await urls.close();
  });
} else {
  const db = await pgliteDb();
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20 });
  const urls = await providers();
  const boxoffice = await startBoxoffice({ db, transport, schema }, optionsFor(urls));
  console.log('boxoffice: embedded (PGlite in this process, the log in its tables): no server used');
  console.log(`boxoffice: e-mail provider at ${urls.emailUrl}, payment provider at ${urls.paymentUrl}`);
  usage(boxoffice.order.url);
  untilSignal(async () => {
    await boxoffice.close();
    await urls.close();
    await db.close();
  });
}
