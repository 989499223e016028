// Runs the boxoffice's services in this process like an orchestrator would: a service that crashes (the crasher fires
// at one of its hops) is dropped as it is, its open transaction dying with it, and a new instance started.
import type { BoxofficeDeps, RunningService } from '../../examples/boxoffice/shared/deps.ts';
import { type BoxofficeOptions, type ServiceName, serviceNames, services } from '../../examples/boxoffice/system.ts';
import type { FaultPoint } from '../../src/observability/faults.ts';
import { Crash } from '../demo/crasher.ts';

/** A crash of one service at one of the library's hops (`any`: whichever service reaches that hop first). */
export interface PlannedCrash {
  service: ServiceName | 'any';
  point: FaultPoint;
}

export interface Supervisor {
  /** The order API's base URL (the same port across restarts). */
  readonly orderUrl: string;
  /** The service's instance running now. */
  current(name: ServiceName): RunningService | undefined;
  /** Arms a crash: the next time that service reaches that hop, it crashes. */
  arm(crash: PlannedCrash): void;
  /** The crashes that happened, as `service at point`. */
  readonly crashes: string[];
  /** Crashes armed and not reached (yet). */
  readonly missed: string[];
  close(): Promise<void>;
}

export async function superviseBoxoffice(deps: BoxofficeDeps, options: BoxofficeOptions): Promise<Supervisor> {
  const armed: string[] = [];
  const fired: string[] = [];
  const running = new Map<ServiceName, RunningService>();
  const crashes: string[] = [];
  let orderPort = options.order?.port ?? 0;
  let orderUrl = '';

  async function start(name: ServiceName): Promise<void> {
    const faults = (point: FaultPoint) => {
      let at = armed.indexOf(`${name} at ${point}`);
      if (at < 0) at = armed.indexOf(`any at ${point}`);
      if (at < 0) return;
      armed.splice(at, 1);
      fired.push(`${name} at ${point}`);
      throw new Crash(`${name} at ${point}`);
    };
    const order = { ...options.order, port: orderPort };
    const service = await services[name]({ ...deps, faults }, { ...options, order });
    if ('url' in service) {
      orderUrl = String(service.url);
      orderPort = Number(new URL(orderUrl).port);
    }
    running.set(name, service);
  }

  for (const name of serviceNames) await start(name);
  let closed = false;
  let restarting = Promise.resolve();
  const watch = setInterval(() => {
    for (const crash of fired.splice(0)) {
      crashes.push(crash);
      const name = crash.split(' ')[0] as ServiceName;
      restarting = restarting.then(async () => {
        const dropped = running.get(name); // read here: an earlier restart in this chain may have replaced it
        // a crashed instance is not waited for long: its open work dies with it
        const gone = dropped?.close().catch(() => undefined);
        await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 3000))]);
        if (!closed) await start(name);
      });
    }
  }, 20);

  return {
    get orderUrl() {
      return orderUrl;
    },
    crashes,
    current: (name) => running.get(name),
    get missed() {
      return [...armed];
    },
    arm(crash) {
      armed.push(`${crash.service} at ${crash.point}`);
    },
    async close() {
      closed = true;
      clearInterval(watch);
      await restarting;
      for (const service of [...running.values()].reverse()) await service.close();
    },
  };
}
