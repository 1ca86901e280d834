// exec/attach over a raw SPDY upgrade (Go clients before WebSocket, kubectl with
// KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false): one SPDY stream per standard stream (header streamtype =
// error|stdin|stdout|stderr|resize); the status goes on the error stream, stdin ends with the stream's FIN.
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Duplex, type Readable } from 'node:stream';
import type { SpdyStream } from 'spdy-transport';
import { badRequest } from '../api/errors.js';
import type { StreamSession } from '../types.js';
import { legacyErrorText, sessionStatus } from './exit-status.js';
import { writeStatusResponse } from './http-error.js';
import { openSession, sessionOutcome } from './remotecommand-session.js';
import { ResizeDecoder } from './resize-decoder.js';
import { endStream, serveSpdy, streamHeader } from './spdy-session.js';
import { negotiateSpdyProtocol, switchToSpdy } from './spdy-upgrade.js';
import { commandFromQuery, queryFlag, subresourceFromPath } from './upgrade-request.js';

const V4 = 'v4.channel.k8s.io';
const V3 = 'v3.channel.k8s.io';
const SERVED = [V4, V3, 'v2.channel.k8s.io', 'channel.k8s.io'];
/** the kubelet's wait for the client to open every expected stream */
const STREAM_CREATION_TIMEOUT_MS = 30_000;
/** after the status, the client closes the connection; this bounds the wait */
const CLIENT_CLOSE_TIMEOUT_MS = 5_000;

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

export function handleSpdyRemoteCommand(req: IncomingMessage, socket: Duplex, head: Buffer, open: () => Promise<StreamSession>): void {
  const protocol = negotiateSpdyProtocol(req, SERVED);
  if (protocol === undefined) {
    writeStatusResponse(socket, badRequest(`unable to upgrade: unable to negotiate protocol: server supports [${SERVED.join(' ')}]`));
    return;
  }
  const tty = queryFlag(req, 'tty');
  const expected = new Set<StreamType>(['error']);
  if (queryFlag(req, 'stdin')) expected.add('stdin');
  if (queryFlag(req, 'stdout')) expected.add('stdout');
  if (queryFlag(req, 'stderr') && !tty) expected.add('stderr');
  if (tty && (protocol === V4 || protocol === V3)) expected.add('resize');
  const kind = subresourceFromPath(req) === 'attach' ? 'attach' : 'exec';
  const command = commandFromQuery(req);

  void (async () => {
    const session = await openSession(socket, open);
    if (!session) return;
    // the client opens its streams only after the 101; hold the output meanwhile (with backpressure), since
    // a child process's unread stdio is discarded when it exits
    const stdout = session.stdout?.pipe(new PassThrough()) ?? null;
    const stderr = session.stderr?.pipe(new PassThrough()) ?? null;
    switchToSpdy(socket, head, protocol);
    const streams = new Map<StreamType, SpdyStream>();
    let started = false;
    let finished = false;
    const creationTimer = setTimeout(() => spdy.destroy(), STREAM_CREATION_TIMEOUT_MS);

    const spdy = serveSpdy(
      socket,
      (stream) => {
        const type = streamHeader(stream, 'streamtype') as StreamType;
        if (!expected.has(type) || streams.has(type) || started) {
          stream.abort('PROTOCOL_ERROR');
          return;
        }
        stream.respond(200, {});
        streams.set(type, stream);
        if (streams.size === expected.size) {
          started = true;
          clearTimeout(creationTimer);
          run();
        }
      },
      () => {
        clearTimeout(creationTimer);
        if (!finished) {
          finished = true;
          session.abort();
        }
      },
    );

    const run = () => {
      const stdinStream = streams.get('stdin');
      if (stdinStream && session.stdin) {
        session.stdin.on('error', () => undefined);
        stdinStream.pipe(session.stdin);
      } else stdinStream?.resume();
      const resizeStream = streams.get('resize');
      if (resizeStream) {
        const decoder = new ResizeDecoder();
        resizeStream.on('data', (chunk: Buffer) => {
          for (const size of decoder.push(chunk)) session.resize(size.width, size.height);
        });
      }
      const outputs = Promise.all([pipeOutput(stdout, streams.get('stdout')), pipeOutput(stderr, streams.get('stderr'))]);
      void sessionOutcome(session, outputs).then((result) => {
        if (finished) return;
        finished = true;
        const errorStream = streams.get('error')!;
        const status = sessionStatus(result, kind, command);
        const text = protocol === V4 ? JSON.stringify(status) : legacyErrorText(status);
        endStream(errorStream, text);
        setTimeout(() => spdy.destroy(), CLIENT_CLOSE_TIMEOUT_MS).unref();
      });
    };
  })();
}

/** resolves once the output has been handed to its stream (or there is none to hand) */
function pipeOutput(source: Readable | null, target: SpdyStream | undefined): Promise<void> {
  if (!source) {
    if (target) endStream(target);
    return Promise.resolve();
  }
  if (!target) {
    source.resume();
    return new Promise((resolve) => source.once('close', resolve).once('end', resolve));
  }
  source.pipe(target);
  return new Promise((resolve) => {
    target.once('finish', resolve);
    target.once('close', resolve);
    source.once('error', () => {
      endStream(target);
      resolve();
    });
  });
}
