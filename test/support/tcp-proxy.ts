import { createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can play a server restart as the client sees it: every open connection is
 * cut (mid-transaction, mid-batch), new connections are refused while it is "down", then accepted again.
 */
export async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  // A black hole: bytes either way are dropped, no connection is closed (a dead network path as both ends see it).
  let silent = false;

  async function listen(): Promise<void> {
    server = createServer((client) => {
      const upstream = new (client.constructor as typeof Socket)();
      upstream.connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.on('data', (bytes: Buffer) => silent || upstream.write(bytes));
      upstream.on('data', (bytes: Buffer) => silent || client.write(bytes));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
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
    /** From now on every byte either way is dropped and nothing is closed: the connections go silent. */
    silence(): void {
      silent = true;
    },
    close: down,
  };
}
