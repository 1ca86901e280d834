/**
 * Pings on a stream's WebSocket: they keep proxies from cutting a quiet session, and a server that stops
 * answering them (no pong for pongTimeoutMs, client-go's 61 s) ends the session as failed rather than
 * leaving it hanging.
 */
import WebSocket from 'ws';

export interface KeepAliveOptions {
  intervalMs?: number;
  pongTimeoutMs?: number;
}

/** Starts pinging; `onSilent` (told the timeout in seconds) runs just before the socket is terminated. Returns the stop. */
export function keepAlive(ws: WebSocket, opts: KeepAliveOptions, onSilent: (seconds: number) => void): () => void {
  const pongTimeout = opts.pongTimeoutMs ?? 61_000;
  let lastPong = Date.now();
  ws.on('pong', () => (lastPong = Date.now()));
  const pinger = setInterval(() => {
    if (Date.now() - lastPong > pongTimeout) {
      onSilent(Math.round(pongTimeout / 1000));
      ws.terminate();
    } else if (ws.readyState === WebSocket.OPEN) ws.ping();
  }, opts.intervalMs ?? 5000);
  pinger.unref();
  return () => clearInterval(pinger);
}
