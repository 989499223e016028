// The whole boxoffice: every service on one database and one transport. In one process (embedded, or a test) all are
// started here; with `--kafka` each runs in a process of its own and each process starts just its own (main.ts).
import { type Db, migrate, type Transport } from 'effectively';
import { type AlertingOptions, startAlerting } from './alerting/index.ts';
import { type Show, startInventory } from './inventory/index.ts';
import { type NotificationOptions, startNotification } from './notification/index.ts';
import { type OrderOptions, type OrderService, startOrder } from './order/index.ts';
import { type PaymentOptions, startPayment } from './payment/index.ts';
import { startSearch } from './search/index.ts';
import type { BoxofficeDeps, RunningService } from './shared/deps.ts';
import { ordersTopic, seatsTopic } from './shared/events.ts';

export interface BoxofficeOptions {
  /** Shows on sale (default: the three of the story). */
  shows?: Show[];
  order?: OrderOptions;
  /** Where the e-mail provider is (`emailUrl`), its rate limit... */
  notification: NotificationOptions;
  /** Where the payment provider is (`providerUrl`), its rate limit... */
  payment: PaymentOptions;
  /** The alerts' webhook, how often dead letters and dead effects are counted. */
  alerting?: AlertingOptions;
}

export const defaultShows: Show[] = [
  { showId: 'opening-night', capacity: 500 },
  { showId: 'matinee', capacity: 300 },
  { showId: 'finale', capacity: 200 },
];

/** The services by name, in the order they start. */
export const services = {
  order: (deps: BoxofficeDeps, options: BoxofficeOptions) => startOrder(deps, options.order),
  inventory: (deps: BoxofficeDeps, options: BoxofficeOptions) =>
    startInventory(deps, { shows: options.shows ?? defaultShows }),
  search: (deps: BoxofficeDeps) => startSearch(deps),
  notification: (deps: BoxofficeDeps, options: BoxofficeOptions) => startNotification(deps, options.notification),
  payment: (deps: BoxofficeDeps, options: BoxofficeOptions) => startPayment(deps, options.payment),
  alerting: (deps: BoxofficeDeps, options: BoxofficeOptions) => startAlerting(deps, options.alerting),
} satisfies Record<string, (deps: BoxofficeDeps, options: BoxofficeOptions) => Promise<RunningService>>;

export type ServiceName = keyof typeof services;
export const serviceNames = Object.keys(services) as ServiceName[];

/** Once per database and transport, before any service starts: the library's tables, the topics, the shows. */
export async function prepareBoxoffice(deps: { db: Db; transport: Transport; schema: string }): Promise<void> {
  await migrate(deps.db, { schema: deps.schema });
  const admin = deps.transport.admin();
  try {
    await admin.createTopics([
      { topic: ordersTopic, partitions: 6 },
      { topic: seatsTopic, partitions: 6 },
    ]);
  } finally {
    await admin.close();
  }
}

export interface Boxoffice {
  order: OrderService;
  services: RunningService[];
  close(): Promise<void>;
}

/** Starts every service in this process. */
export async function startBoxoffice(deps: BoxofficeDeps, options: BoxofficeOptions): Promise<Boxoffice> {
  await prepareBoxoffice(deps);
  const started: RunningService[] = [];
  const close = async () => {
    for (const service of started.reverse()) await service.close();
  };
  try {
    for (const name of serviceNames) started.push(await services[name](deps, options));
  } catch (error) {
    await close();
    throw error;
  }
  return { order: started[0] as OrderService, services: started, close };
}
