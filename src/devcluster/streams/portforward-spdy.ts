// Port-forward over SPDY (kubectl): per forwarded TCP connection the client opens an error stream and a data
// stream sharing a requestid; the server dials the port for each pair and pipes. Pairs are independent: a
// failed dial ends only its own pair (the message goes to that pair's error stream).
import type { Duplex } from 'node:stream';
import type { SpdyStream } from 'spdy-transport';
import { forwardingError } from './portforward-errors.js';
import { endStream, serveSpdy, streamHeader } from './spdy-session.js';

interface StreamPair {
  data?: SpdyStream;
  error?: SpdyStream;
}

export function servePortForwardOverSpdy(socket: Duplex, podName: string, connect: (port: number) => Promise<Duplex>): void {
  const pairs = new Map<string, StreamPair>();
  const connections = new Set<Duplex>();
  let closed = false;

  const onStream = (stream: SpdyStream) => {
    const type = streamHeader(stream, 'streamtype');
    const port = Number(streamHeader(stream, 'port'));
    if ((type !== 'data' && type !== 'error') || !Number.isInteger(port) || port <= 0 || port > 65535) {
      stream.abort('PROTOCOL_ERROR'); // the kubelet rejects such streams
      return;
    }
    stream.respond(200, {}); // spdystream's CreateStream waits for this reply
    const id = requestId(stream, type);
    const pair = pairs.get(id) ?? {};
    pair[type] = stream;
    pairs.set(id, pair);
    if (pair.data && pair.error) {
      pairs.delete(id);
      forward(pair.data, pair.error, port);
    }
  };

  const forward = (data: SpdyStream, error: SpdyStream, port: number) => {
    error.resume(); // the client half-closes its side of the error stream at once
    connect(port).then(
      (tcp) => {
        if (closed) {
          tcp.destroy();
          return;
        }
        connections.add(tcp);
        pipePair(data, error, tcp, () => connections.delete(tcp));
      },
      (err: unknown) => {
        endStream(error, forwardingError(port, podName, err));
        endStream(data);
        data.resume();
      },
    );
  };

  serveSpdy(socket, onStream, () => {
    closed = true;
    for (const tcp of connections) tcp.destroy();
    connections.clear();
    pairs.clear();
  });
}

/** both directions with backpressure and half-close; the error stream ends once the data has */
function pipePair(data: SpdyStream, error: SpdyStream, tcp: Duplex, onDone: () => void): void {
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    tcp.destroy();
    endStream(data); // a reset TCP connection never emitted 'end' through the pipe
    endStream(error);
    onDone();
  };
  tcp.on('error', finish);
  tcp.on('close', finish);
  data.on('close', finish); // also a client RST (Reset after its copy finished)
  tcp.pipe(data);
  data.pipe(tcp);
}

/**
 * Old clients sent no requestid; the kubelet then pairs streams by id (error and data streams of one
 * connection are consecutive odd ids), which this copies.
 */
function requestId(stream: SpdyStream, type: 'data' | 'error'): string {
  const header = streamHeader(stream, 'requestid');
  if (header) return header;
  return `#${Math.floor((type === 'error' ? stream.id : stream.id - 2) / 4)}`;
}
