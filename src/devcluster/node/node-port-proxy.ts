// What kube-proxy does on a node for NodePort and LoadBalancer Services, for the dev cluster's one node: each
// TCP node port is a listener on 127.0.0.1 that relays a connection to a ready pod the Service selects, on the
// port its targetPort names. The pods are chosen when a connection comes, so a pod that becomes ready or goes
// away is seen by the next one. A Service whose node ports change or that is deleted closes its listeners and
// the connections they carry; so does the node's stop.
import { createServer, type Server, type Socket } from 'node:net';
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, ObjectStore } from '../types.js';
import { matchesMap } from './label-selector.js';
import { connectTcp } from './port-forward.js';

const SERVICE = resourceByKind('Service');
const POD = resourceByKind('Pod');

interface NodePortTarget {
  namespace: string;
  service: string;
  /** the Service port's name, to find it again when a connection comes */
  portName: string;
  port: number;
}

interface Listener {
  key: string;
  server: Server;
  sockets: Set<Socket>;
}

const targetKey = (t: NodePortTarget, nodePort: number) => `${nodePort} ${t.namespace}/${t.service} ${t.portName} ${t.port}`;

export class NodePortProxy {
  private readonly listeners = new Map<number, Listener>();
  private stopped = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly host = '127.0.0.1',
  ) {}

  /** listens on every TCP node port of the stored Services, and on no other */
  sync(): void {
    if (this.stopped) return;
    const wanted = this.wantedPorts();
    for (const [port, listener] of this.listeners) {
      const target = wanted.get(port);
      if (!target || targetKey(target, port) !== listener.key) this.close(port);
    }
    for (const [port, target] of wanted) if (!this.listeners.has(port)) this.open(port, target);
  }

  stop(): void {
    this.stopped = true;
    for (const port of [...this.listeners.keys()]) this.close(port);
  }

  private wantedPorts(): Map<number, NodePortTarget> {
    const wanted = new Map<number, NodePortTarget>();
    for (const svc of this.store.list(SERVICE, undefined).items) {
      if (svc.spec?.type !== 'NodePort' && svc.spec?.type !== 'LoadBalancer') continue;
      for (const p of svc.spec?.ports ?? []) {
        if (!p?.nodePort || (p.protocol ?? 'TCP') !== 'TCP') continue;
        wanted.set(p.nodePort, { namespace: svc.metadata.namespace!, service: svc.metadata.name!, portName: p.name ?? '', port: p.port });
      }
    }
    return wanted;
  }

  private open(port: number, target: NodePortTarget): void {
    const listener: Listener = { key: targetKey(target, port), server: createServer(), sockets: new Set() };
    listener.server.on('connection', (client) => {
      listener.sockets.add(client);
      client.once('close', () => listener.sockets.delete(client));
      void this.relay(client, target, listener.sockets);
    });
    listener.server.on('error', (err) => {
      // a port the host already uses: kube-proxy would not get it either; the Service keeps its allocation
      process.emitWarning(`berth dev-cluster node: cannot serve node port ${port} of Service ${target.namespace}/${target.service}: ${err.message}`);
      if (this.listeners.get(port) === listener) this.listeners.delete(port);
    });
    listener.server.listen(port, this.host);
    this.listeners.set(port, listener);
  }

  private close(port: number): void {
    const listener = this.listeners.get(port);
    if (!listener) return;
    this.listeners.delete(port);
    listener.server.close();
    for (const s of listener.sockets) s.destroy();
  }

  private async relay(client: Socket, target: NodePortTarget, sockets: Set<Socket>): Promise<void> {
    client.on('error', () => undefined);
    const endpoint = this.pickEndpoint(target);
    // no ready pod: the connection is refused, as kube-proxy's REJECT rule answers a Service without endpoints
    if (!endpoint) return void client.resetAndDestroy();
    let upstream: Socket;
    try {
      upstream = await connectTcp(endpoint.ip, endpoint.port);
    } catch {
      return void client.resetAndDestroy();
    }
    if (client.destroyed) return void upstream.destroy();
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  }

  /** a random ready pod of the Service and the port its targetPort names there */
  private pickEndpoint(target: NodePortTarget): { ip: string; port: number } | undefined {
    const svc = this.store.tryGet(SERVICE, target.namespace, target.service);
    const selector = svc?.spec?.selector as Record<string, string> | undefined;
    const servicePort = (svc?.spec?.ports ?? []).find((p: any) => (p?.name ?? '') === target.portName);
    // a Service without a selector has no endpoints the node could know of (its Endpoints are written by hand)
    if (!svc || !servicePort || !selector || Object.keys(selector).length === 0) return undefined;
    const endpoints = this.store
      .list(POD, target.namespace)
      .items.filter((pod) => matchesMap(selector, pod.metadata.labels) && isReady(pod) && pod.status?.podIP)
      .map((pod) => ({ ip: pod.status!.podIP as string, port: containerPort(pod, servicePort.targetPort ?? servicePort.port) }))
      .filter((e): e is { ip: string; port: number } => e.port !== undefined);
    return endpoints[Math.floor(Math.random() * endpoints.length)];
  }
}

function isReady(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Running') return false;
  return (pod.status?.conditions ?? []).some((c: any) => c?.type === 'Ready' && c.status === 'True');
}

/** a number as it is; a name through the pod's container ports, as the endpoints controller resolves it */
function containerPort(pod: KubeObject, targetPort: number | string): number | undefined {
  if (typeof targetPort === 'number') return targetPort;
  for (const c of pod.spec?.containers ?? []) {
    const found = (c?.ports ?? []).find((p: any) => p?.name === targetPort && (p.protocol ?? 'TCP') === 'TCP');
    if (found) return found.containerPort;
  }
  return undefined;
}
