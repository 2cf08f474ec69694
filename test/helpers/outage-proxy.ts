/**
 * A TCP proxy in front of PostgreSQL or Redis that a test can take down without touching the shared
 * server: `down()` cuts every connection through it (the client sees a reset) and refuses new ones
 * the same way, `startingUp()` answers each new PostgreSQL connection as a server that is starting
 * up does (FATAL `57P03`), and `up()` forwards again.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface OutageProxy {
  /** The target's URL with the proxy's host and port in it. */
  url: string;
  up(): void;
  down(): void;
  startingUp(): void;
  close(): Promise<void>;
}

/** A PostgreSQL ErrorResponse, as the server sends it to a connection it refuses. */
function pgFatal(code: string, message: string): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', code],
      ['M', message],
    ]
      .map(([k, v]) => Buffer.from(`${k}${v}\0`))
      .concat([Buffer.from('\0')]),
  );
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeUInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

export async function startOutageProxy(targetUrl: string): Promise<OutageProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || (target.protocol.startsWith('redis') ? 6379 : 5432));
  let mode: 'up' | 'down' | 'starting' = 'up';
  const open = new Set<net.Socket>();
  const cut = () => {
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'down') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'starting') {
      // The startup packet first, then the refusal (as the server answers it).
      client.once('data', () => client.end(pgFatal('57P03', 'the database system is starting up')));
      return;
    }
    const upstream = net.connect(targetPort, target.hostname);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    open.add(client);
    open.add(upstream);
    client.on('close', () => open.delete(client));
    upstream.on('close', () => open.delete(upstream));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    up: () => {
      mode = 'up';
    },
    down: () => {
      mode = 'down';
      cut();
    },
    startingUp: () => {
      mode = 'starting';
      cut();
    },
    close: async () => {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
