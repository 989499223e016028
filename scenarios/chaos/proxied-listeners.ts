// A broker whose clients reach it through the fault proxy. Kafka tells a client, in its metadata, where to connect
// next: a proxy in front of the bootstrap port alone would be bypassed after the first request. So each client gets a
// listener of the broker's own (scripts/kafka.sh KAFKA_EXTRA_LISTENERS) that advertises its proxy's port: everything
// that client sends to the broker, the group coordinator included, crosses its proxy.
import { type FaultProxy, faultProxy } from './fault-proxy.ts';

export interface ProxiedListeners {
  /** `KAFKA_EXTRA_LISTENERS` for scripts/kafka.sh: each name listening on its port, advertising its proxy's. */
  env: { KAFKA_EXTRA_LISTENERS: string };
  proxy(name: string): FaultProxy;
  /** The bootstrap list of a client that must go through `name`'s proxy. */
  brokers(name: string): string[];
  close(): Promise<void>;
}

/** One proxy per name (on a port the OS picks), in front of the broker listener on `ports[i]`. */
export async function proxiedListeners(names: string[], ports: number[]): Promise<ProxiedListeners> {
  const proxies = new Map<string, FaultProxy>();
  try {
    for (const [i, name] of names.entries()) {
      proxies.set(name, await faultProxy({ host: '127.0.0.1', port: ports[i]! }));
    }
  } catch (error) {
    for (const proxy of proxies.values()) await proxy.close();
    throw error;
  }
  const proxy = (name: string) => {
    const found = proxies.get(name);
    if (!found) throw new Error(`no proxied listener named ${name}`);
    return found;
  };
  const listenerName = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  return {
    env: {
      KAFKA_EXTRA_LISTENERS: names.map((name, i) => `${listenerName(name)}:${ports[i]}:${proxy(name).port}`).join(','),
    },
    proxy,
    brokers: (name) => [`127.0.0.1:${proxy(name).port}`],
    async close() {
      for (const each of proxies.values()) await each.close().catch(() => undefined);
    },
  };
}
