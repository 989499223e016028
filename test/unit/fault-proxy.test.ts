// The chaos kit's fault proxy does what each fault says, seen from a client of a local echo server: latency per
// round trip, a bandwidth cap, the server's answers silenced while its requests still arrive, a reset, and the link
// silenced right after a given request. The twin of each is the same exchange with the fault healed or absent.
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { sleep } from '../../src/observability/sleep.ts';

async function echoBehindProxy(t: TestContext) {
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk) => {
      received.push(chunk);
      socket.write(chunk);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy = await faultProxy({ host: '127.0.0.1', port: (server.address() as { port: number }).port });
  t.after(async () => {
    await proxy.close();
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const client = async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    t.after(() => socket.destroy());
    return socket;
  };
  /** Sends `bytes` and resolves with the ms until they all came back, or undefined after `withinMs`. */
  const roundTrip = async (socket: Socket, bytes: Buffer, withinMs = 2000) => {
    const started = Date.now();
    let got = 0;
    return new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), withinMs);
      socket.on('data', function onData(chunk: Buffer) {
        got += chunk.length;
        if (got < bytes.length) return;
        socket.off('data', onData);
        clearTimeout(timer);
        resolve(Date.now() - started);
      });
      socket.write(bytes);
    });
  };
  return { proxy, client, roundTrip, received };
}

test('fault proxy: latency and a bandwidth cap slow the round trip; heal() takes them off', async (t) => {
  const { proxy, client, roundTrip } = await echoBehindProxy(t);
  const socket = await client();
  proxy.shape({ latencyMs: 150 });
  assert.ok((await roundTrip(socket, Buffer.from('ping')))! >= 290, 'two legs of 150 ms');
  proxy.shape({ bytesPerSecond: 20_000 });
  assert.ok((await roundTrip(socket, Buffer.alloc(4000, 1)))! >= 350, '4 KB each way at 20 KB/s');
  proxy.heal();
  assert.ok((await roundTrip(socket, Buffer.from('ping')))! < 100, 'healed: at once');
});

test('fault proxy: the answers silenced, the requests still arrive; a new connection works after heal()', async (t) => {
  const { proxy, client, roundTrip, received } = await echoBehindProxy(t);
  const socket = await client();
  proxy.silence('down');
  assert.equal(await roundTrip(socket, Buffer.from('commit'), 500), undefined, 'no answer');
  assert.equal(Buffer.concat(received).toString(), 'commit', 'the request arrived');
  proxy.heal();
  assert.equal(await roundTrip(socket, Buffer.from('again'), 500), undefined, 'a silenced connection stays silent');
  assert.ok((await roundTrip(await client(), Buffer.from('new'))) !== undefined, 'a new connection answers');
});

test('fault proxy: silenceAfter forwards the matching request, then nothing; reset ends the connection', async (t) => {
  const { proxy, client, roundTrip, received } = await echoBehindProxy(t);
  const socket = await client();
  const fired = proxy.silenceAfter('COMMIT');
  assert.ok((await roundTrip(socket, Buffer.from('BEGIN'))) !== undefined, 'before the match: answered');
  assert.equal(await roundTrip(socket, Buffer.from('COMMIT'), 500), undefined, 'its answer lost');
  await fired;
  await sleep(50);
  assert.match(Buffer.concat(received).toString(), /COMMIT$/, 'the COMMIT reached the server');
  const other = await client();
  const closed = new Promise<string>((resolve) =>
    other.once('error', (error: Error & { code?: string }) => resolve(error.code ?? '')),
  );
  proxy.reset();
  assert.equal(await closed, 'ECONNRESET');
});
