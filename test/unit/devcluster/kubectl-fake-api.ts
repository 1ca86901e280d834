// Test helper: a small API server built from the pure modules (discovery, patch, tables) so that the real
// kubectl 1.32 can be pointed at them, and a kubectl runner. Not the dev cluster's HTTP server.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../../../src/devcluster/api/errors.js';
import { applyPatch } from '../../../src/devcluster/api/patch.js';
import { findResource } from '../../../src/devcluster/api/resources.js';
import { toTable } from '../../../src/devcluster/api/tables.js';
import { discoveryResponse } from '../../../src/devcluster/server/discovery.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { scratchDir } from '../../util/scratch.js';

export interface RecordedRequest {
  method: string;
  path: string;
  accept?: string;
  contentType?: string;
  authorization?: string;
  body: string;
}

export interface FakeApi {
  url: string;
  /** where kubectl keeps its discovery cache for this server */
  cacheDir: string;
  requests: RecordedRequest[];
  /** key: `${namespace ?? ''}/${plural}/${name}` */
  objects: Map<string, KubeObject>;
  close(): Promise<void>;
}

export interface FakeApiOptions {
  /** answer /api and /apis with the legacy documents whatever the Accept header asks */
  legacyOnly?: boolean;
  tls?: { certPem: string; keyPem: string };
}

const ROUTE = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/;

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export async function startFakeApi(opts: FakeApiOptions = {}): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const objects = new Map<string, KubeObject>();
  let rv = 1;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push({ method: req.method ?? '', path: req.url ?? '', accept: req.headers.accept, contentType: req.headers['content-type'], authorization: req.headers.authorization, body });
      const send = (code: number, payload: unknown, contentType = 'application/json') => {
        res.writeHead(code, { 'content-type': contentType });
        res.end(JSON.stringify(payload));
      };
      try {
        if (req.method === 'GET') {
          const d = discoveryResponse(url.pathname, opts.legacyOnly ? undefined : req.headers.accept);
          if (d) return send(200, d.body, d.contentType);
        }
        const m = ROUTE.exec(url.pathname);
        const rt = m ? findResource(m[2] ?? '', m[1] ?? m[3]!, m[5]!) : undefined;
        if (!m || !rt) return send(404, status(404, 'NotFound', 'the server could not find the requested resource'));
        const namespace = m[4];
        const name = m[6];
        const key = (n: string) => `${namespace ?? ''}/${rt.plural}/${n}`;
        const wantsTable = (req.headers.accept ?? '').includes('as=Table');
        if (req.method === 'GET' && !name) {
          const items = [...objects.entries()].filter(([k]) => k.startsWith(namespace ? `${namespace}/${rt.plural}/` : '')).map(([, o]) => o).filter((o) => o.kind === rt.kind);
          if (wantsTable) return send(200, toTable(rt, items, { resourceVersion: String(rv) }, url.searchParams.get('includeObject') ?? undefined), 'application/json;as=Table;v=v1;g=meta.k8s.io');
          return send(200, { kind: rt.listKind, apiVersion: 'v1', metadata: { resourceVersion: String(rv) }, items });
        }
        if (req.method === 'POST' && !name) {
          const obj = JSON.parse(body) as KubeObject;
          obj.metadata = { ...obj.metadata, namespace, uid: `uid-${rv}`, resourceVersion: String(++rv), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
          objects.set(key(obj.metadata.name!), obj);
          return send(201, obj);
        }
        const current = name ? objects.get(key(name)) : undefined;
        if (!current) return send(404, status(404, 'NotFound', `${rt.plural} "${name}" not found`));
        if (req.method === 'GET') return send(200, wantsTable ? toTable(rt, [current], { resourceVersion: current.metadata.resourceVersion }) : current);
        if (req.method === 'PATCH') {
          const patched = applyPatch(req.headers['content-type'] ?? '', current, body);
          patched.metadata.resourceVersion = String(++rv);
          objects.set(key(name!), patched);
          return send(200, patched);
        }
        return send(405, status(405, 'MethodNotAllowed', 'method not allowed'));
      } catch (err) {
        if (err instanceof ApiError) return send(err.code, err.toStatus());
        return send(500, status(500, 'InternalError', String(err)));
      }
    });
  };
  const server = opts.tls ? https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const cacheDir = scratchDir('berth-kubectl-cache-');
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    cacheDir,
    requests,
    objects,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the fake server (no kubeconfig unless `kubeconfig` is given). */
export function kubectl(api: FakeApi, args: string[], kubeconfig?: string): Promise<KubectlResult> {
  const target = kubeconfig ? ['--kubeconfig', kubeconfig] : ['--kubeconfig', '/dev/null', '--server', api.url];
  return new Promise((resolve) => {
    execFile('kubectl', [...target, '--cache-dir', api.cacheDir, '--request-timeout', '15s', ...args], { timeout: 30_000, env: { ...process.env, KUBECONFIG: '' } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? ((err as any).code as number) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
