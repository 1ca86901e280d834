// A stand-in for the API server's pods/portforward, for unit tests of berth's port-forward client: the WebSocket
// channel protocol as the kubelet speaks it (v4.channel.k8s.io: data channel 2i and error channel 2i+1 for the i-th
// port, each opened with the port in 2 bytes little-endian), to loopback ports instead of a pod's, with two faults:
// upgrades refused with a 500 Status, and forwards cut without a close frame. The end-to-end suites hold the client
// to a real kube-apiserver and kubelet; this holds it to the faults a test must be able to aim.
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export interface PortForwardFaults {
  /** refuse this many upgrades with 500 InternalError, counting down */
  refuseUpgrades: number;
  /** cut every forward (no close frame) once the pod side answers, or 100 ms after it connected */
  dropForwards: boolean;
}

export interface PortForwardServer {
  url: string;
  faults: PortForwardFaults;
  /** upgrades asked for, refused ones included */
  upgrades: number;
  close(): Promise<void>;
}

const PROTOCOL = 'v4.channel.k8s.io';
const DROP_AFTER_MS = 100;

function refuse(socket: Duplex, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 });
  socket.end(
    `HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function frame(channel: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), payload]);
}

/** One forward of one port over `ws`: what the pod side sends goes out on channel 0, failures on channel 1. */
function forward(ws: WebSocket, pod: string, port: number, drop: boolean): void {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16LE(port);
  ws.send(frame(0, prefix));
  ws.send(frame(1, prefix));
  const tcp: Socket = connect(port, '127.0.0.1');
  const pending: Buffer[] = [];
  let connected = false;
  ws.on('message', (raw: Buffer) => {
    if (raw[0] !== 0) return;
    if (connected) tcp.write(raw.subarray(1));
    else pending.push(raw.subarray(1));
  });
  ws.on('close', () => tcp.destroy());
  tcp.on('connect', () => {
    connected = true;
    for (const data of pending.splice(0)) tcp.write(data);
    // a cut forward loses the pod's first bytes: the cut listens before the relay does
    if (drop) {
      const cut = () => ws.terminate();
      setTimeout(cut, DROP_AFTER_MS).unref();
      tcp.once('data', cut);
    }
    tcp.on('data', (chunk: Buffer) => ws.send(frame(0, chunk)));
  });
  tcp.on('error', (err) => {
    if (!connected) ws.send(frame(1, Buffer.from(`error forwarding port ${port} to pod ${pod}, uid : ${err.message}`)));
  });
  tcp.on('close', () => ws.close(1000));
}

export async function startPortForwardServer(): Promise<PortForwardServer> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => (offered.has(PROTOCOL) ? PROTOCOL : false) });
  const sockets = new Set<Duplex>();
  const server = createServer((_req, res) => {
    res.writeHead(404);
    res.end();
  });
  const state: PortForwardServer = { url: '', faults: { refuseUpgrades: 0, dropForwards: false }, upgrades: 0, close: async () => undefined };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    state.upgrades++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://stub');
    const pod = /\/pods\/([^/]+)\/portforward$/.exec(url.pathname)?.[1];
    const port = Number(url.searchParams.get('ports'));
    if (state.faults.refuseUpgrades > 0) {
      state.faults.refuseUpgrades--;
      refuse(socket, 'port-forward refused by the stub server (refuseUpgrades)');
      return;
    }
    if (!pod || !port) {
      refuse(socket, `not a port-forward request: ${req.url}`);
      return;
    }
    const drop = state.faults.dropForwards;
    wss.handleUpgrade(req, socket, head, (ws) => forward(ws, pod, port, drop));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    server.close();
    await once(server, 'close');
  };
  return state;
}
