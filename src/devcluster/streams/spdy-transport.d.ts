// The part of the untyped npm package spdy-transport (3.x) that the dev cluster's SPDY server uses.
declare module 'spdy-transport' {
  import type { EventEmitter } from 'node:events';
  import type { Duplex } from 'node:stream';

  export interface SpdyStream extends Duplex {
    readonly id: number;
    /** SYN_STREAM headers, names lower-case as SPDY/3 sends them */
    readonly headers: Record<string, string | string[] | undefined>;
    respond(status: number, headers: Record<string, string>, callback?: (err?: Error) => void): void;
    abort(code?: string, callback?: () => void): void;
    /** internal state, touched only by spdy-session.ts */
    readonly _spdyState: any;
  }

  export interface SpdyConnection extends EventEmitter {
    end(callback?: () => void): void;
    destroyStreams(err?: Error): void;
    /** internal state, touched only by spdy-session.ts */
    readonly _spdyState: any;
  }

  export interface ConnectionOptions {
    protocol: 'spdy' | 'http2';
    isServer: boolean;
    headerCompression?: boolean;
    maxChunk?: number | false;
    windowSize?: number;
  }

  const transport: {
    connection: { create(socket: Duplex, options: ConnectionOptions): SpdyConnection };
  };
  export default transport;
}
