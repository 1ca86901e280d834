/**
 * Named volumes are PersistentVolumeClaims `<name>-<hash(instance, name)>` (1Gi, ReadWriteOnce); the
 * claim's annotation `berth.dev/volume` names the volume, so a restarted berth finds them again. An
 * anonymous volume (`-v /path`) is a named volume whose name dockerd would have made up (64 hex digits).
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { rfc3339 } from '../../runtime/plan.js';
import { ANNOTATION_EXPIRES_AT, ownershipLabels } from '../../runtime/pod-rules.js';
import { badRequest, conflict, notFound } from '../http/http.js';
import { shortHash, type AnonymousVolume, type ContainerRecord, type CreateBody, type VolumeRecord } from '../model.js';
import { NAME_RE } from '../networks/networks.js';
import type { Claim, ServeCluster } from '../cluster.js';
import type { EventBus } from '../event-bus.js';

export const ANNOTATION_VOLUME = 'berth.dev/volume';
/** the volume's Docker labels (JSON), for a berth that takes the claim over */
export const ANNOTATION_VOLUME_LABELS = 'berth.dev/volume-labels';
/** dockerd's label on the volumes it makes for `-v /path` */
export const LABEL_ANONYMOUS = 'com.docker.volume.anonymous';

const CLAIMS_ONLY = "berth's volumes are PersistentVolumeClaims of the cluster's default StorageClass and take no driver or options";

/**
 * A volume driver other than `local`, or driver options (`docker volume create -d nfs -o type=nfs`, `--mount
 * volume-driver=…,volume-opt=…`): refused, where they were dropped and the volume made without them.
 * `flags` name where the client gave them.
 */
export function refuseDriverSettings(
  driver: string | undefined,
  options: Record<string, string> | null | undefined,
  flags: { driver: string; options: string },
): void {
  if (driver && driver !== 'local') throw badRequest(`volume driver "${driver}" is not supported: ${CLAIMS_ONLY}; leave out ${flags.driver}`);
  const given = Object.entries(options ?? {}).map(([k, v]) => `${k}=${v}`);
  if (given.length) throw badRequest(`volume driver options are not supported (${given.join(', ')}): ${CLAIMS_ONLY}; leave out ${flags.options}`);
}

/**
 * What anonymousVolumesOf reads of a create's mount plan (containers/mounts.ts MountPlan, which imports this
 * module): the paths its volumes and tmpfs cover, and its volume mounts without a source.
 */
export interface PlannedMounts {
  volumes: ReadonlyArray<{ target: string }>;
  anonymous: ReadonlyArray<{ target: string; readOnly: boolean }>;
}

/**
 * The anonymous volumes of a create, each with a new name: its `Volumes` (container paths, the image's VOLUMEs
 * among them) and its volume mounts without a source. A path that a bind, mount or tmpfs of the same create
 * already covers gets none, as with dockerd.
 */
export function anonymousVolumesOf(body: CreateBody, plan: PlannedMounts): AnonymousVolume[] {
  const covered = new Set([...plan.volumes, ...plan.anonymous].map((m) => withoutTrailingSlash(m.target)));
  const out: AnonymousVolume[] = plan.anonymous.map((m) => ({ name: newVolumeName(), target: m.target, ...(m.readOnly ? { readOnly: true } : {}) }));
  for (const target of Object.keys(body.Volumes ?? {})) {
    if (!target.startsWith('/')) throw badRequest(`invalid volume path ${target}: an anonymous volume (-v /path) needs an absolute path in the container`);
    if (covered.has(withoutTrailingSlash(target))) continue;
    out.push({ name: newVolumeName(), target });
  }
  return out;
}

/**
 * The labels a create's volume mounts give the volumes they name (`--mount type=volume,src=v,volume-label=k=v`):
 * dockerd labels a volume it makes for the mount with them; one that exists keeps its own.
 */
export function mountVolumeLabels(body: CreateBody): Map<string, Record<string, string>> {
  const labels = new Map<string, Record<string, string>>();
  for (const m of body.HostConfig?.Mounts ?? []) {
    if (m.Type === 'volume' && m.Source && m.VolumeOptions?.Labels) labels.set(m.Source, { ...labels.get(m.Source), ...m.VolumeOptions.Labels });
  }
  return labels;
}

/** A bind of a container path alone (`/data`, as docker-py sends `volumes=['/data']`): an anonymous volume, as dockerd parses it. */
export function isAnonymousBind(spec: string): boolean {
  return !spec.includes(':');
}

/** A volume mount without a source (`--mount type=volume,dst=/path`): an anonymous volume, not a named one. */
export function isAnonymousMount(m: { Type?: string; Source?: string }): boolean {
  return m.Type === 'volume' && !m.Source;
}

/** named as dockerd names anonymous volumes: 64 hex digits */
const newVolumeName = (): string => randomBytes(32).toString('hex');

const withoutTrailingSlash = (path: string): string => path.replace(/\/+$/, '');

/**
 * A mount point of a container as dockerd records it: a volume (its name) or a tmpfs of `--mount` (none), its
 * path in the container, the mode a `-v` bind gave and whether it is writable.
 */
export interface MountPoint {
  type: 'volume' | 'tmpfs';
  name?: string;
  destination: string;
  /** dockerd's Mode: a `-v` bind's mode text, `z` when it gave none; empty for `--mount`s and anonymous volumes */
  mode: string;
  rw: boolean;
}

/** Binds (named volumes: host paths are refused at create), Mounts and anonymous volumes; `--tmpfs` is no mount point in dockerd either. */
export function mountPointsOf(c: ContainerRecord): MountPoint[] {
  const hc = c.body.HostConfig ?? {};
  // dockerd keeps destinations cleaned (`/data/` is `/data`), and `ps --filter volume=` compares with those
  const clean = (path: string): string => posix.normalize(path).replace(/(.)\/+$/, '$1');
  const bind = (spec: string): MountPoint => {
    const [name, destination = '', mode = ''] = spec.split(':');
    return { type: 'volume', name, destination: clean(destination), mode: mode || 'z', rw: !mode.split(',').includes('ro') };
  };
  return [
    // a bind of a path alone, and a volume mount without a source, are among the anonymous volumes below
    ...(hc.Binds ?? []).filter((b) => !isAnonymousBind(b)).map(bind),
    ...(hc.Mounts ?? [])
      .filter((m) => !isAnonymousMount(m))
      .map((m): MountPoint => ({
        type: m.Type === 'tmpfs' ? 'tmpfs' : 'volume',
        name: m.Type === 'tmpfs' ? undefined : m.Source,
        destination: clean(m.Target ?? ''),
        mode: '',
        rw: !m.ReadOnly,
      })),
    ...(c.anonymousVolumes ?? []).map((a): MountPoint => ({ type: 'volume', name: a.name, destination: clean(a.target), mode: '', rw: !a.readOnly })),
  ];
}

/** A mount as `docker inspect` and `docker ps` show it (the Engine API's MountPoint). */
export interface DockerMount {
  Type: string;
  Name?: string;
  Source: string;
  Destination: string;
  Driver?: string;
  Mode: string;
  RW: boolean;
  Propagation: string;
}

/**
 * The container's mounts as dockerd lists them: a volume with its driver and its source (`mountpoint`: where its
 * claim is), a tmpfs with neither; the propagation is a bind's only, and berth has no binds.
 */
export function dockerMounts(c: ContainerRecord, mountpoint: (volume: string) => string): DockerMount[] {
  return mountPointsOf(c).map((m) =>
    m.type === 'tmpfs'
      ? { Type: 'tmpfs', Source: '', Destination: m.destination, Mode: m.mode, RW: m.rw, Propagation: '' }
      : {
          Type: 'volume',
          Name: m.name,
          Source: mountpoint(m.name ?? ''),
          Destination: m.destination,
          Driver: 'local',
          Mode: m.mode,
          RW: m.rw,
          Propagation: '',
        },
  );
}

export interface VolumeDeps {
  cluster: ServeCluster;
  owner: string;
  ttlSeconds: number;
  bus: EventBus;
  containers: Map<string, ContainerRecord>;
}

export class Volumes {
  readonly records = new Map<string, VolumeRecord>();

  constructor(private readonly deps: VolumeDeps) {}

  values(): IterableIterator<VolumeRecord> {
    return this.records.values();
  }

  get(name: string): VolumeRecord | undefined {
    return this.records.get(name);
  }

  has(name: string): boolean {
    return this.records.has(name);
  }

  find(name: string): VolumeRecord {
    const v = this.records.get(name);
    if (!v) throw notFound(`get ${name}: no such volume`);
    return v;
  }

  /** The claim of a volume, made or to be made (by `docker volume create`, or the create of its first container). */
  private claimName(name: string): string {
    return (
      this.records.get(name)?.claim ??
      `${
        name
          .toLowerCase()
          .replace(/[^a-z0-9-]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .slice(0, 40) || 'vol'
      }-${shortHash(`${this.deps.owner}/${name}`, 8)}`
    );
  }

  /** Where the volume is, as inspect's Mountpoint and a mount's Source say it: its claim. */
  mountpoint(name: string): string {
    return `pvc://${this.claimName(name)}`;
  }

  /** claims being made: a second ensure of the same name (two creates naming one new volume) waits for the first */
  private readonly making = new Map<string, Promise<VolumeRecord>>();

  async ensure(name: string, labels: Record<string, string> = {}): Promise<VolumeRecord> {
    const existing = this.records.get(name) ?? this.making.get(name);
    if (existing) return existing;
    if (!NAME_RE.test(name)) throw badRequest(`invalid volume name "${name}"`);
    const made = this.make(name, labels);
    this.making.set(name, made);
    try {
      return await made;
    } finally {
      this.making.delete(name);
    }
  }

  /**
   * The volumes of one container create, made together: when one cannot be made, those this call made are
   * removed again (the create fails and leaves nothing behind), the ones that were there stay.
   */
  async ensureAll(wanted: Array<{ name: string; labels: Record<string, string> }>): Promise<void> {
    const made: string[] = [];
    try {
      for (const { name, labels } of wanted) {
        const fresh = !this.records.has(name) && !this.making.has(name);
        await this.ensure(name, labels);
        if (fresh) made.push(name);
      }
    } catch (err) {
      for (const name of made) await this.remove(name, true).catch(() => undefined);
      throw err;
    }
  }

  private async make(name: string, labels: Record<string, string>): Promise<VolumeRecord> {
    const claim = this.claimName(name);
    await this.deps.cluster.createClaim({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claim,
        labels: ownershipLabels(this.deps.owner),
        annotations: {
          [ANNOTATION_EXPIRES_AT]: rfc3339(new Date(Date.now() + this.deps.ttlSeconds * 1000)),
          [ANNOTATION_VOLUME]: name,
          ...(Object.keys(labels).length ? { [ANNOTATION_VOLUME_LABELS]: JSON.stringify(labels) } : {}),
        },
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const rec: VolumeRecord = { name, claim, created: new Date(), labels };
    this.records.set(name, rec);
    this.deps.bus.emit('volume', 'create', { id: name, name });
    return rec;
  }

  /** The containers, in any state, that mount the volume: dockerd's references, which keep it from `rm` and prune. */
  usersOf(name: string): ContainerRecord[] {
    return [...this.deps.containers.values()].filter((c) => mountPointsOf(c).some((m) => m.name === name));
  }

  async remove(name: string, force: boolean): Promise<void> {
    const v = this.find(name);
    const users = this.usersOf(name);
    if (users.length && !force) throw conflict(`remove ${name}: volume is in use - [${users.map((u) => u.id).join(', ')}]`);
    await this.deps.cluster.deleteClaim(v.claim);
    this.records.delete(name);
    this.deps.bus.emit('volume', 'destroy', { id: name, name });
  }

  /** The claims an earlier berth of this instance made. */
  recover(claims: Claim[]): void {
    for (const pvc of claims) {
      const name = pvc.metadata?.annotations?.[ANNOTATION_VOLUME];
      if (name && pvc.metadata?.name)
        this.records.set(name, { name, claim: pvc.metadata.name, created: new Date(pvc.metadata.creationTimestamp ?? Date.now()), labels: savedLabels(pvc) });
    }
  }
}

/** The Docker labels a claim was made with; none when it has no (readable) note of them. */
function savedLabels(pvc: Claim): Record<string, string> {
  try {
    const labels: unknown = JSON.parse(pvc.metadata?.annotations?.[ANNOTATION_VOLUME_LABELS] ?? '{}');
    if (!labels || typeof labels !== 'object' || Array.isArray(labels)) return {};
    return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}
