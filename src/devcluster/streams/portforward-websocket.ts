// Port-forward over the WebSocket channel protocol (v4.channel.k8s.io; what @kubernetes/client-node uses):
// the i-th requested port gets data channel 2i and error channel 2i+1, each opened by the server with the
// port as 2 bytes little-endian. One TCP connection per port per WebSocket; the socket closes once every
// port's connection is over.
import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { ChannelCodec, toBuffer } from './channel-codec.js';
import { sendOnChannel } from './channel-send.js';
import { forwardingError } from './portforward-errors.js';
import { isBase64Protocol } from './subprotocols.js';
import { closeSession } from './websocket-accept.js';

const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** a dropped forward is cut at the pod's first output or this long after connecting, whichever is first */
const DROP_AFTER_MS = 100;

interface ForwardedPort {
  port: number;
  tcp?: Duplex;
  /** client data that arrived before the connection was up */
  pending: Buffer[];
  over: boolean;
}

/** `drop`: the dropStreams fault; the socket is cut without a close frame once the pod side is connected. */
export function servePortForwardOverChannels(ws: WebSocket, protocol: string, ports: readonly number[], podName: string, connect: (port: number) => Promise<Duplex>, drop = false): void {
  const codec = new ChannelCodec(isBase64Protocol(protocol));
  const forwards: ForwardedPort[] = ports.map((port) => ({ port, pending: [], over: false }));
  let socketPaused = false;

  const send = (channel: number, payload: Buffer, sent?: () => void) => sendOnChannel(ws, codec, channel, payload, sent);
  const finish = (f: ForwardedPort) => {
    if (f.over) return;
    f.over = true;
    f.tcp?.destroy();
    if (forwards.every((x) => x.over) && ws.readyState === WebSocket.OPEN) closeSession(ws);
  };
  const resumeSocket = () => {
    if (!socketPaused) return;
    socketPaused = false;
    ws.resume();
  };
  const writeToPod = (f: ForwardedPort, data: Buffer) => {
    if (f.over || data.length === 0) return;
    if (!f.tcp) {
      f.pending.push(data);
      return;
    }
    const tcp = f.tcp;
    if (!tcp.write(data) && !socketPaused) {
      socketPaused = true;
      ws.pause();
      const resume = () => {
        tcp.off('drain', resume);
        tcp.off('close', resume);
        resumeSocket();
      };
      tcp.on('drain', resume);
      tcp.on('close', resume);
    }
  };
  const attach = (f: ForwardedPort, index: number, tcp: Duplex) => {
    if (f.over || ws.readyState !== WebSocket.OPEN) {
      tcp.destroy();
      return;
    }
    f.tcp = tcp;
    if (drop) {
      const cut = () => ws.terminate();
      setTimeout(cut, DROP_AFTER_MS).unref();
      tcp.once('data', cut);
    }
    tcp.on('data', (chunk: Buffer) => {
      send(2 * index, chunk, () => {
        if (tcp.isPaused() && ws.bufferedAmount <= LOW_WATER) tcp.resume();
      });
      if (ws.bufferedAmount > HIGH_WATER) tcp.pause();
    });
    tcp.on('error', () => finish(f));
    tcp.on('close', () => finish(f));
    tcp.on('end', () => finish(f));
    for (const data of f.pending.splice(0)) writeToPod(f, data);
  };

  ws.on('error', () => undefined); // 'close' follows
  ws.on('close', () => {
    for (const f of forwards) {
      f.over = true;
      f.tcp?.destroy();
    }
    resumeSocket();
  });
  ws.on('message', (raw) => {
    const frame = codec.decode(toBuffer(raw));
    if (!frame || frame.channel % 2 !== 0) return; // error channels are the server's to write
    const f = forwards[frame.channel / 2];
    if (f) writeToPod(f, frame.payload);
  });

  forwards.forEach((f, index) => {
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16LE(f.port);
    send(2 * index, prefix);
    send(2 * index + 1, prefix);
  });
  forwards.forEach((f, index) => {
    connect(f.port).then(
      (tcp) => attach(f, index, tcp),
      (err: unknown) => {
        send(2 * index + 1, Buffer.from(forwardingError(f.port, podName, err)));
        finish(f);
      },
    );
  });
}
