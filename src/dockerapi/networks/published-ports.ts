/**
 * Published ports: each one listens on berth's machine at the HostPort inspect reports (and on ::1 as
 * well for loopback, since `localhost` may resolve there first); every accepted connection is its own
 * way into the pod (port-proxy.ts), so a dropped one affects only that connection.
 */
import net from 'node:net';
import { DockerError } from '../http/http.js';
import type { ContainerRecord } from '../model.js';
import type { PortProxy, PortTarget } from './port-proxy.js';

export interface PortPublisherDeps {
  /** Where ports listen when the client names no HostIp. */
  publishAddress: string;
  proxy: PortProxy;
  /** The container's current pod, waiting while it starts. */
  target(c: ContainerRecord): Promise<PortTarget>;
}

export class PortPublisher {
  private readonly servers = new Map<string, net.Server[]>();

  constructor(private readonly deps: PortPublisherDeps) {}

  /** Listens on every port the container publishes (again: a restart is a new pod), recording them in c.ports. */
  async open(c: ContainerRecord): Promise<void> {
    this.close(c);
    const hc = c.body.HostConfig ?? {};
    const wanted: Array<{ key: string; hostIp: string; hostPort: number }> = [];
    for (const [key, bindings] of Object.entries(hc.PortBindings ?? {})) {
      if (!key.endsWith('/tcp') && key.includes('/')) continue;
      for (const b of bindings ?? [{}]) wanted.push({ key: key.includes('/') ? key : `${key}/tcp`, hostIp: b.HostIp ?? '', hostPort: Number(b.HostPort || 0) });
    }
    if (hc.PublishAllPorts) {
      // UDP and SCTP ones were refused at create (containers/create-checks.ts); `80` is `80/tcp`, as for dockerd.
      for (const exposed of Object.keys(c.body.ExposedPorts ?? {})) {
        const key = exposed.includes('/') ? exposed : `${exposed}/tcp`;
        if (key.endsWith('/tcp') && !wanted.some((w) => w.key === key)) wanted.push({ key, hostIp: '', hostPort: 0 });
      }
    }
    const servers: net.Server[] = [];
    this.servers.set(c.id, servers);
    for (const w of wanted) {
      const containerPort = parseInt(w.key, 10);
      const listenIp = w.hostIp && w.hostIp !== '0.0.0.0' ? w.hostIp : this.deps.publishAddress;
      // Half-open: a client that ends its side still gets the pod's answer.
      const server = net.createServer(
        { allowHalfOpen: true },
        (socket) => void this.deps.proxy.handle(socket, containerPort, `container ${c.name}`, () => this.deps.target(c)),
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new DockerError(500, `cannot publish port ${w.key} on ${listenIp}:${w.hostPort}: ${err.message}`)));
        server.listen(w.hostPort, listenIp, () => resolve());
      });
      servers.push(server);
      const port = (server.address() as net.AddressInfo).port;
      if (!w.hostIp && listenIp === '127.0.0.1') {
        // Clients connect to `localhost`, which may resolve to ::1 first: the same port there too.
        const v6 = net.createServer(
          { allowHalfOpen: true },
          (socket) => void this.deps.proxy.handle(socket, containerPort, `container ${c.name}`, () => this.deps.target(c)),
        );
        await new Promise<void>((resolve) => {
          v6.once('error', () => resolve());
          v6.listen(port, '::1', () => resolve());
        });
        if (v6.listening) servers.push(v6);
      }
      c.ports.push({ key: w.key, containerPort, hostIp: listenIp, reportedIp: w.hostIp || '0.0.0.0', hostPort: port });
    }
  }

  close(c: ContainerRecord): void {
    for (const s of this.servers.get(c.id) ?? []) s.close();
    this.servers.delete(c.id);
    c.ports = [];
  }
}
