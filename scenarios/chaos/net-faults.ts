// `npm run chaos -- --net-faults`: every connection of the writer, the relay and the consumer crosses a fault proxy of
// its own (PostgreSQL for all three; the broker for the relay and the consumer, through a private broker whose
// per-role listeners advertise the proxies' ports), and the run injects network faults there between the kills:
// latency with jitter, a bandwidth cap, resets, silence both ways or in one direction, one direction slowed. After each
// fault the kit measures, as for a kill, the seconds from the network's return to the role's next progress.
import { fileURLToPath } from 'node:url';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import type { BrokerSetup } from './brokers.ts';
import type { Role } from './children.ts';
import { type FaultProxy, faultProxy } from './fault-proxy.ts';
import { proxiedListeners } from './proxied-listeners.ts';
import { percentile } from './recovery.ts';

export const netFaultKinds = ['latency', 'bandwidth', 'reset', 'silent', 'slow-down', 'silent-down'] as const;
export type NetFaultKind = (typeof netFaultKinds)[number];
type Link = 'pg' | 'kafka';

/** How long a fault lasts before the network is healed (a reset is instant). */
export const netFaultMs = 2000;

export interface NetFault {
  kind: NetFaultKind;
  role: Role;
  link: Link;
  /** When it was injected and when the network came back (epoch ms). */
  at: number;
  healedAt: number;
  /** Seconds from the network's return to the role's next progress (undefined: not measured). */
  seconds?: number;
}

export interface ChaosNetwork {
  /** The private broker the roles reach through their proxies (started by the run when not running). */
  brokers: BrokerSetup;
  /** Per role: DATABASE_URL and KAFKA_BROKERS through its proxies. */
  roleEnv: Partial<Record<Role, Record<string, string>>>;
  /** Injects fault `i` (kinds and targets taken in turn) and heals it after `netFaultMs`. */
  inject(i: number): NetFault;
  /** Fills in the recovery of every healed fault whose role progressed since (`progressAfter`: first progress after t). */
  settle(progressAfter: (role: Role, t: number) => number | undefined): void;
  /** One fault at a time: the last one was measured (its role moved again), or healed 30 s ago. */
  quiet(): boolean;
  readonly faults: NetFault[];
  close(): Promise<void>;
}

const targets: { role: Role; link: Link }[] = [
  { role: 'consumer', link: 'kafka' },
  { role: 'relay', link: 'pg' },
  { role: 'writer', link: 'pg' },
  { role: 'relay', link: 'kafka' },
  { role: 'consumer', link: 'pg' },
];

function apply(proxy: FaultProxy, kind: NetFaultKind): void {
  if (kind === 'latency') proxy.shape({ latencyMs: 150, jitterMs: 100 });
  else if (kind === 'bandwidth') proxy.shape({ bytesPerSecond: 32 * 1024 });
  else if (kind === 'reset') proxy.reset();
  else if (kind === 'silent') proxy.silence();
  else if (kind === 'slow-down') proxy.shape({ latencyMs: 400 }, 'down');
  else proxy.silence('down');
}

/**
 * The proxies and the broker setup. `pgUrl` is the database the roles use (the shared server or the private cluster);
 * the private broker listens on `CHAOS_NET_KAFKA_PORT` (default 29094; controller +1, the relay's and the consumer's
 * listeners +2 and +3), home `.kafka/net`.
 */
export async function chaosNetwork(pgUrl = defaultDatabaseUrl()): Promise<ChaosNetwork> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const base = Number(process.env.CHAOS_NET_KAFKA_PORT ?? 29094);
  const listeners = await proxiedListeners(['relay', 'consumer'], [base + 2, base + 3]);
  const url = new URL(pgUrl);
  const pg = new Map<Role, FaultProxy>();
  for (const role of ['writer', 'relay', 'consumer'] as const) {
    pg.set(role, await faultProxy({ host: url.hostname, port: Number(url.port || 5432) }));
  }
  const through = (role: Role) => {
    const proxied = new URL(pgUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(pg.get(role)!.port);
    return proxied.toString();
  };
  const proxyOf = (role: Role, link: Link) => (link === 'pg' ? pg.get(role)! : listeners.proxy(role));
  const faults: NetFault[] = [];
  return {
    brokers: {
      nodes: 1,
      env: {
        KAFKA_HOME_DIR: `${root}.kafka/net`,
        KAFKA_LIBS: process.env.KAFKA_LIBS ?? `${root}.kafka/libs`,
        KAFKA_PORT: String(base),
        KAFKA_CONTROLLER_PORT: String(base + 1),
        ...listeners.env,
      },
      brokers: [`127.0.0.1:${base}`],
    },
    roleEnv: {
      writer: { DATABASE_URL: through('writer') },
      relay: { DATABASE_URL: through('relay'), KAFKA_BROKERS: listeners.brokers('relay').join(',') },
      consumer: { DATABASE_URL: through('consumer'), KAFKA_BROKERS: listeners.brokers('consumer').join(',') },
    },
    inject(i) {
      const kind = netFaultKinds[i % netFaultKinds.length]!;
      const { role, link } = targets[i % targets.length]!;
      const proxy = proxyOf(role, link);
      const at = Date.now();
      apply(proxy, kind);
      const fault: NetFault = { kind, role, link, at, healedAt: kind === 'reset' ? at : at + netFaultMs };
      if (kind !== 'reset') setTimeout(() => proxy.heal(), netFaultMs).unref();
      faults.push(fault);
      return fault;
    },
    settle(progressAfter) {
      const now = Date.now();
      for (const fault of faults) {
        if (fault.seconds !== undefined || fault.healedAt > now) continue;
        const next = progressAfter(fault.role, fault.healedAt);
        if (next !== undefined) fault.seconds = (next - fault.healedAt) / 1000;
      }
    },
    quiet() {
      const last = faults.at(-1);
      return !last || last.seconds !== undefined || Date.now() - last.healedAt > 30_000;
    },
    faults,
    async close() {
      await listeners.close();
      for (const proxy of pg.values()) await proxy.close().catch(() => undefined);
    },
  };
}

/** `chaos: net-fault kind=silent measured=4 recovery_p50_s=... recovery_p99_s=... max_s=... targets=...`, per kind. */
export function netFaultLines(faults: NetFault[]): string[] {
  const f = (seconds: number) => seconds.toFixed(2);
  const lines = netFaultKinds
    .map((kind) => faults.filter((fault) => fault.kind === kind))
    .filter((mine) => mine.length > 0)
    .map((mine) => {
      const seconds = mine.flatMap((fault) => (fault.seconds === undefined ? [] : [fault.seconds]));
      const on = [...new Set(mine.map((fault) => `${fault.role}:${fault.link}`))].sort().join(',');
      const measured = seconds.length;
      return (
        `chaos: net-fault kind=${mine[0]!.kind} injected=${mine.length} measured=${measured}` +
        (measured > 0
          ? ` recovery_p50_s=${f(percentile(seconds, 0.5))} recovery_p99_s=${f(percentile(seconds, 0.99))} max_s=${f(Math.max(...seconds))}`
          : '') +
        ` on=${on}`
      );
    });
  const unmeasured = faults.filter((fault) => fault.seconds === undefined).length;
  if (unmeasured > 0)
    lines.push(`chaos: net-fault unmeasured=${unmeasured} (the role had no work left, or the run ended first)`);
  return lines;
}
