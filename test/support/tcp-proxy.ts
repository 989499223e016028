import { createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can play a server restart as the client sees it: every open connection is
 * cut (mid-transaction, mid-batch), new connections are refused while it is "down", then accepted again. It can also
 * play a network gone silent: connections stay open on both sides but nothing is forwarded any more, either way (what
 * a dropped route or a frozen middlebox looks like; neither end gets an error or a close).
 */
export async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let silent = false;
  const links = new Set<{ client: Socket; upstream: Socket }>();
  const mute = ({ client, upstream }: { client: Socket; upstream: Socket }) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    // read and drop: the peers' writes are accepted (their TCP sees acknowledgements) and go nowhere
    client.on('data', () => undefined).resume();
    upstream.on('data', () => undefined).resume();
  };

  async function listen(): Promise<void> {
    server = createServer((client) => {
      const upstream = new (client.constructor as typeof Socket)();
      upstream.connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      const link = { client, upstream };
      links.add(link);
      // a silent network carries no close either (down() still destroys every socket)
      client.on('close', () => {
        links.delete(link);
        if (!silent) upstream.destroy();
      });
      upstream.on('close', () => {
        if (!silent) client.destroy();
      });
      if (silent) mute(link);
      else client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
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
    /** Cuts every connection, refuses new ones for `downMs`, then accepts again on the same port. */
    async restart(downMs: number): Promise<void> {
      await down();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await listen();
    },
    /** From now on nothing is forwarded on any connection, open or new; nothing is closed either. */
    silence(): void {
      silent = true;
      for (const link of links) mute(link);
    },
    close: down,
  };
}
