// What each client request through the fault proxy cost the API server, counted by Kubernetes verb and resource as
// kube-apiserver's apiserver_request_total counts them, but only for the clients in front of the proxy (berth, the
// tests, kubectl): the cluster's own parts (kubelets, controllers, scheduler) talk to kube-apiserver directly and
// are not in it. Open watches are counted as they start and end. The bench reads it at GET /berth-dev/v1/requests.

export const REQUESTS_PATH = '/berth-dev/v1/requests';

const TRUE_VALUES = new Set(['true', '1', 't', 'T', 'TRUE', 'True']);

export interface RequestKey {
  /** Kubernetes' verb: get, list, watch, create, update, patch, delete, deletecollection, connect (an upgrade) */
  verb: string;
  /** resource[/subresource], e.g. pods, pods/log, pods/exec; a non-resource path as itself, e.g. /version */
  resource: string;
}

/** The verb and resource of a request as kube-apiserver's request info names them. Pure. */
export function requestKey(method: string, url: string, upgrade = false): RequestKey {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  let parts = path.split('/').filter(Boolean);
  const isApi = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : 0;
  if (!isApi || parts.length <= isApi) return { verb: method.toLowerCase(), resource: path || '/' };
  parts = parts.slice(isApi);
  let watchPath = false;
  if (parts[0] === 'watch') {
    watchPath = true;
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length >= 3) parts = parts.slice(2);
  const [resource, name, ...sub] = parts;
  const full = sub.length ? `${resource}/${sub.join('/')}` : resource!;
  const named = name !== undefined;
  const watch = watchPath || TRUE_VALUES.has(query.get('watch') ?? '');
  if (upgrade) return { verb: 'connect', resource: full };
  switch (method) {
    case 'GET':
    case 'HEAD':
      return { verb: watch ? 'watch' : named ? 'get' : 'list', resource: full };
    case 'POST':
      return { verb: 'create', resource: full };
    case 'PUT':
      return { verb: 'update', resource: full };
    case 'PATCH':
      return { verb: 'patch', resource: full };
    case 'DELETE':
      return { verb: named ? 'delete' : 'deletecollection', resource: full };
    default:
      return { verb: method.toLowerCase(), resource: full };
  }
}

export interface TallySnapshot {
  /** "verb resource" → requests since the proxy started */
  requests: Record<string, number>;
  total: number;
  /** "resource" → watches open now */
  openWatches: Record<string, number>;
}

export class RequestTally {
  private readonly counts = new Map<string, number>();
  private readonly watches = new Map<string, number>();

  /** Counts a request; for a watch, returns what to call when it ends. */
  record(key: RequestKey): (() => void) | undefined {
    const k = `${key.verb} ${key.resource}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    if (key.verb !== 'watch') return undefined;
    this.watches.set(key.resource, (this.watches.get(key.resource) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.watches.get(key.resource) ?? 1) - 1;
      if (left > 0) this.watches.set(key.resource, left);
      else this.watches.delete(key.resource);
    };
  }

  snapshot(): TallySnapshot {
    const requests = Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
    return { requests, total: [...this.counts.values()].reduce((a, b) => a + b, 0), openWatches: Object.fromEntries(this.watches) };
  }
}

/** What happened between two snapshots: the requests made meanwhile, and the watches open at the second. */
export function tallyBetween(before: TallySnapshot, after: TallySnapshot): TallySnapshot {
  const requests: Record<string, number> = {};
  for (const [k, n] of Object.entries(after.requests)) {
    const d = n - (before.requests[k] ?? 0);
    if (d > 0) requests[k] = d;
  }
  return { requests, total: Object.values(requests).reduce((a, b) => a + b, 0), openWatches: after.openWatches };
}
