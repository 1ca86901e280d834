// A loopback proxy in front of a registry that notes each request (its path and query): what a push or a gc costs,
// counted, and how a listing paged.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  host: string;
  /** `METHOD /v2/path` of every request that reached the registry through the proxy. */
  log: string[];
  /** `METHOD /v2/path?query`: the same requests with their queries (a page's n and last). */
  urls: string[];
  close(): Promise<void>;
}

export async function countingProxy(target: string): Promise<CountingProxy> {
  const log: string[] = [];
  const urls: string[] = [];
  const [hostname, port] = target.split(':');
  const server = http.createServer((req, res) => {
    log.push(`${req.method} ${(req.url ?? '').replace(/\?.*/, '')}`);
    urls.push(`${req.method} ${req.url ?? ''}`);
    const upstream = http.request({ hostname, port: Number(port), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => res.writeHead(502).end(err.message));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    urls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
