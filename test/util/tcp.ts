// Loopback TCP servers for tests of berth's forwarding: one that echoes, and a port where nothing listens.
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface EchoServer {
  port: number;
  close(): Promise<void>;
}

/** echoes every byte; closes its side when the client does */
export async function startEchoServer(): Promise<EchoServer> {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** a loopback port with nothing listening */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  server.close();
  await once(server, 'close');
  return port;
}
