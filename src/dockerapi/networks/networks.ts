/**
 * Networks are records. Every alias of a container on a user network becomes a headless Service
 * `<alias>-<hash(instance, network)>` (unique per berth instance, so two berths in one namespace never
 * collide), and the network's members find each other by alias and name through pod hostAliases.
 */
import { rfc3339 } from '../../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT, LABEL_OWNER, ownershipLabels } from '../../runtime/pod-rules.js';
import { LABEL_CONTAINER_ID } from '../../runtime/sandbox-plan.js';
import { DockerError, badRequest, conflict, notFound } from '../http/http.js';
import { newId, shortHash, type ContainerRecord, type NetworkRecord } from '../model.js';
import type { ServeCluster } from '../cluster.js';
import type { EventBus } from '../event-bus.js';
import { withoutNames } from './hosts-file.js';

export const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
export const ALIAS_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface NetworkDeps {
  cluster: ServeCluster;
  owner: string;
  ttlSeconds: number;
  bus: EventBus;
  containers: Map<string, ContainerRecord>;
}

/** Runs a command in a running member (engine.execCollect). */
type MemberExec = (o: ContainerRecord, argv: string[]) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

export interface NetworkCreateBody {
  Name?: string;
  Driver?: string;
  Labels?: Record<string, string> | null;
  Internal?: boolean;
  Options?: Record<string, string> | null;
}

/**
 * An alias must be a DNS label, in any case: names resolve without regard to case, so berth gives the cluster its
 * lower-case form (a Service name, a pod's hostAliases), as testcontainers-java's own aliases (`tc-DoFSs5TP`) need.
 */
export function checkAliases(aliases: string[]): void {
  for (const a of aliases)
    if (!ALIAS_RE.test(a.toLowerCase())) throw badRequest(`network alias "${a}" must be a DNS label (letters, digits and '-', a letter or digit at each end)`);
}

export class Networks {
  readonly records = new Map<string, NetworkRecord>();

  constructor(private readonly deps: NetworkDeps) {
    for (const name of ['bridge', 'host', 'none']) {
      const id = shortHash(`${deps.owner}/${name}`, 64);
      this.records.set(id, {
        id,
        name,
        driver: name === 'bridge' ? 'bridge' : name === 'host' ? 'host' : 'null',
        created: new Date(),
        labels: {},
        internal: false,
        builtin: true,
      });
    }
  }

  values(): IterableIterator<NetworkRecord> {
    return this.records.values();
  }

  get(id: string): NetworkRecord | undefined {
    return this.records.get(id);
  }

  find(ref: string): NetworkRecord {
    if (ref === 'default') ref = 'bridge';
    const byId = this.records.get(ref);
    if (byId) return byId;
    for (const n of this.records.values()) if (n.name === ref) return n;
    const matches = [...this.records.values()].filter((n) => n.id.startsWith(ref));
    if (matches.length === 1) return matches[0];
    throw notFound(`network ${ref} not found`);
  }

  create(body: NetworkCreateBody): NetworkRecord {
    const name = body.Name;
    if (!name || !NAME_RE.test(name)) throw badRequest(`invalid network name "${name ?? ''}"`);
    for (const n of this.records.values()) if (n.name === name) throw conflict(`network with name ${name} already exists`);
    const id = newId();
    const rec: NetworkRecord = {
      id,
      name,
      driver: body.Driver || 'bridge',
      created: new Date(),
      labels: body.Labels ?? {},
      options: body.Options ?? {},
      internal: Boolean(body.Internal),
      builtin: false,
    };
    this.records.set(id, rec);
    this.deps.bus.emit('network', 'create', { id, name });
    return rec;
  }

  /** A network a recovered container was on: the record is made again under its old id. */
  adopt(saved: { id: string; name: string; labels: Record<string, string> }): NetworkRecord {
    const existing = [...this.records.values()].find((x) => x.name === saved.name);
    if (existing) return existing;
    const rec: NetworkRecord = { id: saved.id, name: saved.name, driver: 'bridge', created: new Date(), labels: saved.labels, internal: false, builtin: false };
    this.records.set(rec.id, rec);
    return rec;
  }

  async connect(netRef: string, c: ContainerRecord, aliases: string[]): Promise<void> {
    const n = this.find(netRef);
    checkAliases(aliases);
    c.networks.set(n.id, [...new Set([...(c.networks.get(n.id) ?? []), ...aliases])]);
    if (c.status === 'running') await this.ensureAliasServices(c);
    this.deps.bus.emit('network', 'connect', { id: n.id, name: n.name }, { container: c.id });
  }

  /**
   * The container leaves the network: its alias Services go, and, when it runs, the names it had there leave the
   * /etc/hosts of the network's running members and theirs leave its own, as dockerd's DNS stops answering them
   * (a name still held on another network the two share stays). Best effort, as the lines were written.
   */
  async disconnect(netRef: string, c: ContainerRecord, exec: MemberExec): Promise<void> {
    const n = this.find(netRef);
    const members = this.runningMembers(n.id, c);
    const had = namesOn(c, n.id);
    for (const a of c.networks.get(n.id) ?? []) await this.deps.cluster.deleteService(this.serviceName(n.id, a)).catch(() => undefined);
    c.networks.delete(n.id);
    this.deps.bus.emit('network', 'disconnect', { id: n.id, name: n.name }, { container: c.id });
    if (c.status !== 'running' || !c.podIP || n.builtin) return;
    for (const o of members) {
      await dropHosts(
        o,
        c.podIP,
        had.filter((name) => !this.sharedNames(c, o).has(name)),
        exec,
      );
      await dropHosts(
        c,
        o.podIP!,
        namesOn(o, n.id).filter((name) => !this.sharedNames(o, c).has(name)),
        exec,
      );
    }
  }

  /** The running members of a network other than `c`, each with a pod and its IP. */
  private runningMembers(netId: string, c: ContainerRecord): ContainerRecord[] {
    return [...this.deps.containers.values()].filter((o) => o !== c && o.status === 'running' && o.podIP && o.podName && o.networks.has(netId));
  }

  /** The names `member` answers to on the user networks it shares with `peer`. */
  private sharedNames(member: ContainerRecord, peer: ContainerRecord): Set<string> {
    const names = new Set<string>();
    for (const [netId] of member.networks) {
      if (this.records.get(netId)?.builtin || !peer.networks.has(netId)) continue;
      for (const name of namesOn(member, netId)) names.add(name);
    }
    return names;
  }

  /** Whether a running container is on the network: dockerd's active endpoints, which keep it from `rm` and prune and make it not `dangling`. */
  hasActiveEndpoints(id: string): boolean {
    return [...this.deps.containers.values()].some((c) => c.networks.has(id) && c.status === 'running');
  }

  remove(ref: string): void {
    const n = this.find(ref);
    if (n.builtin) throw new DockerError(403, `${n.name} is a pre-defined network and cannot be removed`);
    if (this.hasActiveEndpoints(n.id)) throw new DockerError(403, `error while removing network: network ${n.name} id ${n.id} has active endpoints`);
    for (const c of this.deps.containers.values()) c.networks.delete(n.id);
    this.records.delete(n.id);
    this.deps.bus.emit('network', 'destroy', { id: n.id, name: n.name });
  }

  /** The other running members of c's user networks, by pod IP, with their aliases and names. */
  hostAliasesFor(c: ContainerRecord): Array<{ ip: string; hostnames: string[] }> {
    const byIp = new Map<string, Set<string>>();
    for (const [netId] of c.networks) {
      const n = this.records.get(netId);
      if (!n || n.builtin) continue;
      for (const other of this.deps.containers.values()) {
        if (other === c || other.status !== 'running' || !other.podIP) continue;
        const aliases = other.networks.get(netId);
        if (!aliases) continue;
        const names = byIp.get(other.podIP) ?? new Set<string>();
        for (const a of namesOn(other, netId)) names.add(a);
        byIp.set(other.podIP, names);
      }
    }
    return [...byIp].map(([ip, names]) => ({ ip, hostnames: [...names] }));
  }

  /**
   * A member that runs now is made known to the members already running: hostAliases are fixed when a pod
   * is created, so the line for its IP, aliases and name is appended to their /etc/hosts (through `exec`;
   * best effort: an image without `sh`, or a user who cannot write /etc/hosts, keeps only the Services).
   */
  announce(c: ContainerRecord, exec: MemberExec): Promise<void> {
    if (!c.podIP) return Promise.resolve();
    const known = this.announced.get(c.id);
    if (known?.ip === c.podIP) return known.done;
    const done = this.tellMembers(c, c.podIP, exec);
    this.announced.set(c.id, { ip: c.podIP, done });
    return done;
  }

  /**
   * A running container connected to `netId` (`docker network connect`): it learns the network's running members
   * by its /etc/hosts, and they learn it, as a member that starts on the network would be known (hostAliases
   * and announce). Best effort in the same way; a disconnect takes the lines out again.
   */
  async introduce(netId: string, c: ContainerRecord, exec: MemberExec): Promise<void> {
    if (c.status !== 'running' || !c.podIP || this.records.get(netId)?.builtin) return;
    const members = this.runningMembers(netId, c);
    const theirs = members.map((o) => `${o.podIP}\t${namesOn(o, netId).join(' ')}`);
    if (theirs.length) await appendHosts(c, theirs, exec, { unresolved: 'the members of its network', services: 'their Services <alias>-<hash>' });
    const mine = `${c.podIP}\t${namesOn(c, netId).join(' ')}`;
    for (const o of members) await appendHosts(o, [mine], exec, { unresolved: 'the members of its network', services: 'their Services <alias>-<hash>' });
  }

  private async tellMembers(c: ContainerRecord, ip: string, exec: MemberExec): Promise<void> {
    for (const other of this.deps.containers.values()) {
      if (other === c || other.status !== 'running' || !other.podName) continue;
      const names = this.sharedNames(c, other);
      if (names.size === 0) continue;
      const listed = [...names].join(', ');
      await appendHosts(other, [`${ip}\t${[...names].join(' ')}`], exec, { unresolved: listed, services: `its Services ${listed}-<hash>` });
    }
  }

  /** The container left (exited, removed): a later run announces its new IP again. */
  forget(c: ContainerRecord): void {
    this.announced.delete(c.id);
  }

  private readonly announced = new Map<string, { ip: string; done: Promise<void> }>();

  /**
   * One Service per alias and network, named uniquely for this berth instance. A Service name must begin with
   * a letter (DNS-1035) where a Docker alias may begin with a digit (`1db`): such a name gets an `a` in front
   * (containers find aliases through their hosts file, not through the Service's name).
   */
  serviceName(netId: string, alias: string): string {
    const suffix = shortHash(`${this.deps.owner}/${netId}`, 8);
    const lower = alias.toLowerCase();
    const base = /^[0-9]/.test(lower) ? `a${lower}` : lower;
    return `${base.slice(0, 50).replace(/-+$/, '')}-${suffix}`;
  }

  async ensureAliasServices(c: ContainerRecord): Promise<void> {
    const expires = rfc3339(new Date(Date.now() + this.deps.ttlSeconds * 1000));
    for (const [netId, aliases] of c.networks) {
      const n = this.records.get(netId);
      if (!n || n.builtin) continue;
      for (const alias of aliases) {
        const name = this.serviceName(netId, alias);
        await this.deps.cluster.deleteService(name);
        await this.deps.cluster.createService({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: {
            name,
            labels: { ...ownershipLabels(this.deps.owner), [LABEL_CONTAINER_ID]: c.id.slice(0, 12) },
            annotations: { [ANNOTATION_EXPIRES_AT]: expires, 'berth.dev/alias': alias, 'berth.dev/network': n.name },
          },
          spec: { clusterIP: 'None', selector: { [LABEL_CONTAINER_ID]: c.id.slice(0, 12), [LABEL_OWNER]: this.deps.owner } },
        });
      }
    }
  }

  /** Deletes the container's alias Services; returns the ones that could not be deleted (after retries). */
  async deleteAliasServices(c: ContainerRecord): Promise<string[]> {
    const failed: string[] = [];
    for (const [netId, aliases] of c.networks) {
      for (const alias of aliases) {
        const name = this.serviceName(netId, alias);
        await this.deps.cluster.deleteService(name).catch((err: Error) => failed.push(`service ${name} (${err.message})`));
      }
    }
    return failed;
  }
}

/** The names a member answers to on a network: its aliases there and its container name, those a hosts file can hold. */
function namesOn(c: ContainerRecord, netId: string): string[] {
  return [...new Set([...(c.networks.get(netId) ?? []), c.name].map((a) => a.toLowerCase()))].filter((a) => ALIAS_RE.test(a));
}

/**
 * Appends `lines` to `target`'s /etc/hosts through exec. Best effort: an image without `sh`, or a user who cannot
 * write /etc/hosts, keeps only the Services, and berth serve says which names that container cannot resolve.
 */
async function appendHosts(target: ContainerRecord, lines: string[], exec: MemberExec, say: { unresolved: string; services: string }): Promise<void> {
  const r = await exec(target, ['/bin/sh', '-c', 'printf "%s\\n" "$@" >> /etc/hosts', 'berth-hosts', ...lines]).catch((err: Error) => ({
    exitCode: -1,
    stderr: err.message,
  }));
  if (r.exitCode !== 0)
    process.stderr.write(
      `berth serve: container ${target.name} cannot resolve ${say.unresolved} by /etc/hosts (${r.stderr.trim() || `exit ${r.exitCode}`}); ${say.services} still resolve\n`,
    );
}

/**
 * Takes `names` off the lines of `ip` in `target`'s /etc/hosts through exec: read, edited here, written back only
 * if the file is still what was read (an append meanwhile is read again). Best effort, as appendHosts.
 */
async function dropHosts(target: ContainerRecord, ip: string, names: string[], exec: MemberExec): Promise<void> {
  if (!names.length) return;
  const failed = (why: string): void =>
    void process.stderr.write(`berth serve: container ${target.name} may still resolve ${names.join(', ')} by /etc/hosts (${why})\n`);
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await exec(target, ['cat', '/etc/hosts']).catch((err: Error) => ({ exitCode: -1, stdout: '', stderr: err.message }));
    if (read.exitCode !== 0) return failed(read.stderr.trim() || `exit ${read.exitCode}`);
    const edited = withoutNames(read.stdout, ip, names);
    if (edited === read.stdout) return;
    // $(…) drops trailing newlines of both sides alike; exit 3: the file changed since it was read
    const script = '[ "$(cat /etc/hosts)" = "$(printf "%s" "$1")" ] || exit 3; printf "%s" "$2" > /etc/hosts';
    const write = await exec(target, ['/bin/sh', '-c', script, 'berth-hosts', read.stdout, edited]).catch((err: Error) => ({
      exitCode: -1,
      stdout: '',
      stderr: err.message,
    }));
    if (write.exitCode === 0) return;
    if (write.exitCode !== 3) return failed(write.stderr.trim() || `exit ${write.exitCode}`);
  }
  failed('it kept changing while berth edited it');
}
