// Runs the boxoffice's services in this process like an orchestrator would: a service that crashes (the crasher fires
// at one of its hops) is dropped as it is, its open transaction dying with it, and a new instance started.
import type { BoxofficeDeps, RunningService } from '../../examples/boxoffice/shared/deps.ts';
import { type BoxofficeOptions, type ServiceName, serviceNames, services } from '../../examples/boxoffice/system.ts';
import type { FaultPoint } from '../../src/observability/faults.ts';
import { Crasher } from '../demo/crasher.ts';

/** A crash of one service at one of the library's hops. */
export interface PlannedCrash {
  service: ServiceName;
  point: FaultPoint;
}

export interface Supervisor {
  /** The order API's base URL (the same port across restarts). */
  readonly orderUrl: string;
  /** Arms the next crash (one at a time); a crash not reached within `timeoutMs` is disarmed and counted missed. */
  arm(crash: PlannedCrash, timeoutMs?: number): Promise<void>;
  /** The crashes that happened, as `service at point`. */
  readonly crashes: string[];
  readonly missed: string[];
  close(): Promise<void>;
}

export async function superviseBoxoffice(deps: BoxofficeDeps, options: BoxofficeOptions): Promise<Supervisor> {
  const crasher = new Crasher();
  const running = new Map<ServiceName, RunningService>();
  const crashes: string[] = [];
  const missed: string[] = [];
  let orderPort = options.order?.port ?? 0;
  let orderUrl = '';

  async function start(name: ServiceName): Promise<void> {
    const faults = (point: FaultPoint) => crasher.at(`${name} at ${point}`);
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
    for (const fired of crasher.took()) {
      crashes.push(fired);
      const name = fired.split(' ')[0] as ServiceName;
      const dropped = running.get(name);
      restarting = restarting.then(async () => {
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
    missed,
    async arm(crash, timeoutMs = 15_000) {
      const label = `${crash.service} at ${crash.point}`;
      crasher.arm(label);
      const deadline = Date.now() + timeoutMs;
      while (crasher.armed === label && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (crasher.armed === label) {
        crasher.arm('');
        missed.push(label);
      }
    },
    async close() {
      closed = true;
      clearInterval(watch);
      await restarting;
      for (const service of [...running.values()].reverse()) await service.close();
    },
  };
}
