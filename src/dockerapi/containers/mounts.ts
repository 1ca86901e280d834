/**
 * A create's Binds, Mounts and Tmpfs as the pod's volumes, checked as dockerd checks them at create: a named
 * volume becomes a PersistentVolumeClaim, a tmpfs an emptyDir of medium Memory (`ro` and `size` kept; what an
 * emptyDir cannot do is a warning of the create), a volume mount without a source is an anonymous volume (as
 * docker compose sends `volumes: [/data]`), as is a bind of a container path alone, a host path is refused (a pod cannot see the caller's disk), and
 * `--shm-size` is a memory emptyDir of that size at /dev/shm, as Kubernetes users size a pod's /dev/shm.
 * Nothing that passes here can fail at start for its form.
 */
import { posix } from 'node:path';
import { badRequest } from '../http/http.js';
import type { CreateBody } from '../model.js';
import { NAME_RE } from '../networks/networks.js';
import { isAnonymousBind, isAnonymousMount, refuseDriverSettings } from '../volumes/volumes.js';
import type { SandboxVolume } from '../../runtime/sandbox-plan.js';

export interface MountPlan {
  volumes: SandboxVolume[];
  /** `--mount type=volume,dst=/path` without a source: dockerd makes an anonymous volume there */
  anonymous: Array<{ target: string; readOnly: boolean }>;
  warnings: string[];
}

/** a bind's mode options dockerd accepts for a named volume (`-v name:/path:ro,z`) */
const VOLUME_MODES = new Set(['ro', 'rw', 'z', 'Z', 'nocopy', 'shared', 'rshared', 'slave', 'rslave', 'private', 'rprivate']);
/** tmpfs flags dockerd's ParseTmpfsOptions takes */
const TMPFS_FLAGS = new Set([
  'defaults',
  'ro',
  'rw',
  'suid',
  'nosuid',
  'dev',
  'nodev',
  'exec',
  'noexec',
  'sync',
  'async',
  'dirsync',
  'remount',
  'mand',
  'nomand',
  'atime',
  'noatime',
  'diratime',
  'nodiratime',
  'relatime',
  'norelatime',
  'strictatime',
  'nostrictatime',
  'private',
  'rprivate',
  'shared',
  'rshared',
  'slave',
  'rslave',
  'unbindable',
  'runbindable',
  'bind',
  'rbind',
]);
const TMPFS_KEYS = new Set(['mode', 'uid', 'gid', 'nr_inodes', 'nr_blocks', 'mpol', 'size']);
/** what a pod's emptyDir of medium Memory is anyway: these cost nothing to accept */
const EMPTYDIR_AS_IS = new Set(['defaults', 'rw', 'nosuid', 'nodev', 'exec', 'relatime', 'mode=1777', 'mode=01777', 'mode=777', 'mode=0777']);

const SHM_PATH = '/dev/shm';
/** dockerd's default /dev/shm (config.DefaultShmSize), as containerd and CRI-O give a pod too */
export const DEFAULT_SHM_SIZE = 64 * 1024 * 1024;

function checkVolumeName(name: string): void {
  if (!NAME_RE.test(name)) {
    throw badRequest(
      `create ${name}: "${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`,
    );
  }
}

/** `size=10m` (bytes, or k, m, g) as a Kubernetes quantity */
function sizeLimit(value: string, target: string): string {
  const m = /^(\d+)([kmg]?)$/i.exec(value);
  if (!m) throw badRequest(`invalid tmpfs option size=${value} for ${target}: give bytes or a number with k, m or g`);
  const unit = m[2].toLowerCase();
  return unit ? `${m[1]}${unit.toUpperCase()}i` : m[1];
}

/** one tmpfs: its options checked as dockerd does, applied where an emptyDir can, warned about where not */
function tmpfsVolume(target: string, options: string, warnings: string[]): SandboxVolume {
  const volume: SandboxVolume = { target, readOnly: false, memory: true };
  const ignored: string[] = [];
  for (const option of options
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)) {
    const [key, value] = option.includes('=') ? [option.slice(0, option.indexOf('=')), option.slice(option.indexOf('=') + 1)] : [option, undefined];
    if (value === undefined ? !TMPFS_FLAGS.has(key) : !TMPFS_KEYS.has(key)) throw badRequest(`invalid tmpfs option ["${option}"] for ${target}`);
    if (option === 'ro') volume.readOnly = true;
    else if (key === 'size') volume.sizeLimit = sizeLimit(value!, target);
    else if (!EMPTYDIR_AS_IS.has(option)) ignored.push(option);
  }
  if (ignored.length)
    warnings.push(
      `tmpfs ${target}: ${ignored.join(',')} not applied: a pod's memory-backed emptyDir is mounted rw,nosuid,nodev with mode 1777 (ro and size are kept)`,
    );
  return volume;
}

function bindVolume(bind: string): SandboxVolume {
  const [source, target, mode] = bind.split(':');
  if (!source || !target) throw badRequest(`invalid bind "${bind}": expected source:target[:ro]`);
  if (source.startsWith('/') || source.startsWith('.')) {
    throw badRequest(
      `bind mount of host path ${source} is not supported: a pod cannot see this machine's disk; use a named volume or copy files with docker cp / PUT archive`,
    );
  }
  checkVolumeName(source);
  const modes = (mode ?? '').split(',').filter(Boolean);
  for (const m of modes) if (!VOLUME_MODES.has(m)) throw badRequest(`invalid mode: ${mode}`);
  return { claim: source, target, readOnly: modes.includes('ro') };
}

type MountSpec = NonNullable<NonNullable<CreateBody['HostConfig']>['Mounts']>[number];

/**
 * `--mount type=tmpfs`'s TmpfsOptions as `--tmpfs` options, so both are applied and warned about alike:
 * tmpfs-size (bytes; a negative size is refused), tmpfs-mode (octal; 0 is the default 1777) and the
 * options of API 1.46 (`[["noexec"], ["nr_inodes", "1k"]]`).
 */
function tmpfsMountOptions(m: MountSpec): string {
  const t = m.TmpfsOptions ?? {};
  const options: string[] = [];
  if (t.SizeBytes !== undefined && t.SizeBytes !== 0) {
    if (t.SizeBytes < 0) throw badRequest(`invalid mount config for type "tmpfs": invalid tmpfs size ${t.SizeBytes} for ${m.Target}: it must not be negative`);
    options.push(`size=${t.SizeBytes}`);
  }
  if (t.Mode) options.push(`mode=${t.Mode.toString(8)}`);
  for (const option of t.Options ?? []) options.push(option.join('='));
  return options.join(',');
}

/** a volume mount's driver and options: refused, as for `docker volume create` */
function refuseMountDriver(m: MountSpec): void {
  refuseDriverSettings(m.VolumeOptions?.DriverConfig?.Name, m.VolumeOptions?.DriverConfig?.Options, {
    driver: 'volume-driver= of --mount',
    options: 'volume-opt= of --mount',
  });
}

function mountVolume(m: MountSpec, warnings: string[]): SandboxVolume {
  if (m.Type === 'volume') refuseMountDriver(m);
  if (m.Type === 'volume' && m.Source && m.Target) {
    checkVolumeName(m.Source);
    const subPath = volumeSubpath(m.VolumeOptions?.Subpath);
    return { claim: m.Source, target: m.Target, readOnly: Boolean(m.ReadOnly), ...(subPath ? { subPath } : {}) };
  }
  if (m.Type === 'tmpfs' && m.Target) {
    const volume = tmpfsVolume(m.Target, tmpfsMountOptions(m), warnings);
    volume.readOnly = Boolean(m.ReadOnly);
    return volume;
  }
  throw badRequest(`mount type ${m.Type ?? '?'} of ${m.Source ?? ''} is not supported (named volumes and tmpfs are)`);
}

/** `--mount type=volume,volume-subpath=P` (API 1.45): a relative path that stays inside the volume. */
function volumeSubpath(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const clean = posix.normalize(raw).replace(/\/+$/, '');
  if (raw.startsWith('/') || clean === '..' || clean.startsWith('../'))
    throw badRequest(`invalid mount config for type "volume": subpath ${raw} must be a relative path inside the volume`);
  return clean === '.' ? undefined : clean;
}

/** The create's mounts as pod volumes; 400 in dockerd's words for what dockerd refuses at create. */
export function planMounts(body: CreateBody): MountPlan {
  const hc = body.HostConfig ?? {};
  const warnings: string[] = [];
  const mounts = hc.Mounts ?? [];
  // A bind of a container path alone (docker-py's `volumes=['/data']`) is an anonymous volume, as dockerd parses it.
  const [bindsOfPathsAlone, binds] = partition(hc.Binds ?? [], isAnonymousBind);
  const anonymous = [
    ...mounts.filter(isAnonymousMount).map((m) => {
      if (!m.Target?.startsWith('/'))
        throw badRequest(`invalid mount config for type "volume": the target ${m.Target ? `${m.Target} must be an absolute path` : 'is missing'}`);
      refuseMountDriver(m);
      return { target: m.Target, readOnly: Boolean(m.ReadOnly) };
    }),
    ...bindsOfPathsAlone.map((target) => {
      if (!target.startsWith('/'))
        throw badRequest(
          `invalid volume specification: '${target}': a bind without a source is an anonymous volume, and its path in the container must be absolute`,
        );
      return { target, readOnly: false };
    }),
  ];
  const volumes = [
    ...binds.map(bindVolume),
    ...mounts.filter((m) => !isAnonymousMount(m)).map((m) => mountVolume(m, warnings)),
    ...Object.entries(hc.Tmpfs ?? {}).map(([target, options]) => tmpfsVolume(target, options ?? '', warnings)),
  ];
  const seen = new Set<string>();
  for (const v of [...volumes, ...anonymous]) {
    const target = v.target.replace(/\/+$/, '') || '/';
    if (seen.has(target)) throw badRequest(`Duplicate mount point: ${target}`);
    seen.add(target);
  }
  const shm = shmVolume(hc, seen);
  return { volumes: shm ? [...volumes, shm] : volumes, anonymous, warnings };
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((i) => !test(i))];
}

/**
 * `--shm-size`: /dev/shm as a memory emptyDir with that sizeLimit (the kubelet sizes its tmpfs to it). As in
 * dockerd, a mount of the create's own at /dev/shm wins, and an IPC namespace of `host` or `none` has no /dev/shm
 * of the container's; 0 (or not given) leaves the runtime's /dev/shm of 64 MiB.
 */
function shmVolume(hc: NonNullable<CreateBody['HostConfig']>, targets: Set<string>): SandboxVolume | undefined {
  const size = hc.ShmSize ?? 0;
  if (typeof size !== 'number' || !Number.isInteger(size)) throw badRequest(`invalid HostConfig.ShmSize ${JSON.stringify(size)}: give bytes`);
  if (size < 0) throw badRequest('SHM size can not be less than 0');
  if (size === 0 || targets.has(SHM_PATH) || hc.IpcMode === 'host' || hc.IpcMode === 'none') return undefined;
  return { target: SHM_PATH, readOnly: false, memory: true, sizeLimit: String(size) };
}
