// The chaos kit's network: a TCP proxy (node:net) between a client and its server (PostgreSQL, a broker listener)
// that plays the network's faults as the client sees them. Latency and jitter, a bandwidth cap, connections reset
// (RST), a network gone silent (accepted, then nothing forwarded and no close passed on: a half-open connection behind
// a NAT or a load balancer), one direction only slowed or silenced, a server restart (every connection cut, new ones
// refused for a while), and a one-shot trigger: the link goes silent right after the client sent a given request (a
// COMMIT whose answer never comes).
import { createServer, type Server, Socket } from 'node:net';

/** `up`: client → server; `down`: server → client. */
export type Direction = 'up' | 'down' | 'both';

export interface Shape {
  /** Added to every chunk, in ms. */
  latencyMs?: number;
  /** Up to this much more, at random, per chunk (order is kept: a chunk never overtakes the one before it). */
  jitterMs?: number;
  /** Bytes per second at most (0 or absent: no cap). */
  bytesPerSecond?: number;
}

interface Pump {
  shape: Shape;
  muted: boolean;
  /** When the last scheduled chunk is written (ms): the next starts no earlier. */
  busyUntil: number;
}

interface Link {
  client: Socket;
  upstream: Socket;
  up: Pump;
  down: Pump;
}

export interface FaultProxy {
  readonly port: number;
  /** Connections accepted so far, and open now. */
  readonly accepted: number;
  readonly open: number;
  /** Latency, jitter and bandwidth from now on, on open and new connections (an empty shape: none). */
  shape(shape: Shape, direction?: Direction): void;
  /** Every open connection is reset (RST to both ends); new ones are accepted as usual. */
  reset(): void;
  /**
   * From now on nothing is forwarded in `direction` on any connection, open or new, and no close is passed on: both
   * ends keep a connection that says nothing. Silenced connections stay silent after `heal()` (a half-open connection
   * does not come back); only new ones work again.
   */
  silence(direction?: Direction): void;
  /**
   * One-shot: the first connection whose client sends a chunk containing `match` forwards that chunk, then goes
   * silent both ways (the request reaches the server, its answer never comes back). Resolves when it happened.
   */
  silenceAfter(match: string): Promise<void>;
  /** One-shot: the next chunk the client sends that contains `match` is dropped and its connection reset (both ends). */
  resetOn(match: string): Promise<void>;
  /** New connections are forwarded at full speed again; shaping is off on open ones. Silenced ones stay silent. */
  heal(): void;
  /** Cuts every connection, refuses new ones for `downMs`, then accepts again on the same port (a server restart). */
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

const directions = (direction: Direction): ('up' | 'down')[] => (direction === 'both' ? ['up', 'down'] : [direction]);

export async function faultProxy(
  target: { host: string; port: number },
  options: { port?: number; host?: string } = {},
): Promise<FaultProxy> {
  const links = new Set<Link>();
  const sockets = new Set<Socket>();
  const fresh: Record<'up' | 'down', Pump> = {
    up: { shape: {}, muted: false, busyUntil: 0 },
    down: { shape: {}, muted: false, busyUntil: 0 },
  };
  let trigger: { match: Buffer; fired: () => void; reset?: boolean } | undefined;
  let server: Server | undefined;
  let port = options.port ?? 0;
  let accepted = 0;

  const silent = (link: Link) => link.up.muted || link.down.muted;

  /** Forwards `from`'s data to `to` through `pump`: dropped when muted, delayed when shaped, else written at once. */
  function forward(link: Link, from: Socket, to: Socket, pump: Pump, direction: 'up' | 'down'): void {
    from.on('data', (chunk: Buffer) => {
      if (pump.muted) return; // read and dropped: the sender's TCP sees its data acknowledged, and it goes nowhere
      const fire = direction === 'up' && trigger && chunk.includes(trigger.match) ? trigger : undefined;
      if (fire?.reset) {
        // the request never reaches the server: both ends of this link are reset instead
        trigger = undefined;
        link.client.resetAndDestroy();
        link.upstream.resetAndDestroy();
        fire.fired();
        return;
      }
      const { latencyMs = 0, jitterMs = 0, bytesPerSecond = 0 } = pump.shape;
      const now = Date.now();
      if (latencyMs + jitterMs + bytesPerSecond === 0 && pump.busyUntil <= now) {
        if (!to.destroyed && !to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      } else {
        const start = Math.max(now + latencyMs + Math.random() * jitterMs, pump.busyUntil);
        pump.busyUntil = start + (bytesPerSecond > 0 ? (chunk.length / bytesPerSecond) * 1000 : 0);
        setTimeout(() => {
          if (!pump.muted && !to.destroyed) to.write(chunk);
        }, pump.busyUntil - now);
      }
      if (fire) {
        trigger = undefined;
        link.up.muted = true;
        link.down.muted = true;
        fire.fired();
      }
    });
  }

  function accept(client: Socket): void {
    accepted += 1;
    const upstream = new Socket();
    const link: Link = {
      client,
      upstream,
      up: { ...fresh.up, shape: { ...fresh.up.shape } },
      down: { ...fresh.down, shape: { ...fresh.down.shape } },
    };
    links.add(link);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    // A close is passed on (after the data still scheduled toward that end), unless the link is silent.
    const passClose = (to: Socket, pump: Pump) => {
      if (silent(link)) return;
      setTimeout(() => to.destroy(), Math.max(0, pump.busyUntil - Date.now()));
    };
    client.on('close', () => {
      links.delete(link);
      passClose(upstream, link.up);
    });
    upstream.on('close', () => passClose(client, link.down));
    forward(link, client, upstream, link.up, 'up');
    forward(link, upstream, client, link.down, 'down');
    upstream.connect(target.port, target.host);
  }

  async function listen(): Promise<void> {
    server = createServer(accept);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, options.host ?? '127.0.0.1', () => resolve());
    });
    port = (server!.address() as { port: number }).port;
  }

  async function down(): Promise<void> {
    const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  }

  await listen();
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return links.size;
    },
    shape(shape, direction = 'both') {
      for (const d of directions(direction)) {
        fresh[d].shape = { ...shape };
        for (const link of links) link[d].shape = { ...shape };
      }
    },
    reset() {
      for (const link of links) {
        link.client.resetAndDestroy();
        link.upstream.resetAndDestroy();
      }
    },
    silence(direction = 'both') {
      for (const d of directions(direction)) {
        fresh[d].muted = true;
        for (const link of links) link[d].muted = true;
      }
    },
    silenceAfter(match) {
      return new Promise<void>((fired) => {
        trigger = { match: Buffer.from(match), fired };
      });
    },
    resetOn(match) {
      return new Promise<void>((fired) => {
        trigger = { match: Buffer.from(match), fired, reset: true };
      });
    },
    heal() {
      for (const d of ['up', 'down'] as const) {
        fresh[d] = { shape: {}, muted: false, busyUntil: 0 };
        for (const link of links) link[d].shape = {};
      }
      trigger = undefined;
    },
    async restart(downMs) {
      await down();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await listen();
    },
    close: down,
  };
}
