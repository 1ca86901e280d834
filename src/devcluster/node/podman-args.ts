// podman argv for a pod sandbox and its containers. Pure, so the mapping from pod spec to flags is testable.
import { normalize } from 'node:path/posix';
import type { SecuritySettings } from './security.js';

export const CLUSTER_LABEL = 'io.berth.dev-cluster';

export interface SandboxSpec {
  name: string;
  infraName: string;
  hostname: string;
  labels: Record<string, string>;
  /** no network at all (deny-all NetworkPolicy): loopback only */
  isolated: boolean;
  /** spec.hostNetwork: the node's network namespace */
  hostNetwork?: boolean;
  /** spec.hostIPC: the node's IPC namespace, which the pod's containers then join each (the sandbox keeps none) */
  hostIPC?: boolean;
}

export const POD_SHM_BYTES = 64 * 1024 * 1024;

export function podCreateArgs(s: SandboxSpec): string[] {
  const args = ['pod', 'create', '--name', s.name, '--infra-name', s.infraName, '--hostname', s.hostname, '--no-hosts'];
  for (const [k, v] of Object.entries(s.labels)) args.push('--label', `${k}=${v}`);
  // the pod's /dev/shm as containerd and CRI-O make it (64 MiB); podman's own default is 64000 KiB
  if (s.hostIPC) args.push('--share', 'net,uts');
  else args.push('--shm-size', String(POD_SHM_BYTES));
  args.push('--network', s.isolated ? 'none' : s.hostNetwork ? 'host' : 'podman');
  return args;
}

export interface Mount {
  hostPath: string;
  containerPath: string;
  readOnly: boolean;
  /** podman's overlay volume: hostPath is the read-only lower layer, writes stay with the container */
  overlay?: boolean;
}

/** whether `path` in the container is a mount's destination or below one, where the runtime (runc) resolves it */
export function isOnMount(path: string, mounts: Mount[]): boolean {
  const clean = normalize(path).replace(/\/+$/, '') || '/';
  return mounts.some((m) => {
    const dest = normalize(m.containerPath).replace(/\/+$/, '') || '/';
    return clean === dest || clean.startsWith(dest === '/' ? '/' : `${dest}/`);
  });
}

export interface ContainerSpec {
  podName: string;
  name: string;
  labels: Record<string, string>;
  image: string;
  /** replaces the image's entrypoint (and drops its CMD) */
  command?: string[];
  args?: string[];
  env: [string, string][];
  workingDir?: string;
  security: SecuritySettings;
  stdin: boolean;
  tty: boolean;
  memoryBytes?: number;
  cpus?: number;
  mounts: Mount[];
  /** the pod's hostname, for a container in a sandbox that does not share its UTS namespace (a pooled one) */
  hostname?: string;
  /** spec.hostIPC */
  hostIPC?: boolean;
}

export function containerCreateArgs(c: ContainerSpec): string[] {
  // The node captures output itself through the attached pipes: podman's own log file would be a second copy.
  // passthrough gives the container those pipes themselves, so what it wrote before it exited is in them when
  // conmon's exit file appears (exit-files.ts); a terminal (tty) needs conmon's relay.
  const args = ['create', '--pod', c.podName, '--name', c.name, '--pull', 'never', '--log-driver', c.tty ? 'none' : 'passthrough'];
  for (const [k, v] of Object.entries(c.labels)) args.push('--label', `${k}=${v}`);
  if (c.command && c.command.length > 0) args.push('--entrypoint', JSON.stringify(c.command));
  for (const [k, v] of c.env) args.push('--env', `${k}=${v}`);
  if (c.workingDir) args.push('--workdir', c.workingDir);
  if (c.hostname) args.push('--hostname', c.hostname);
  if (c.hostIPC) args.push('--ipc', 'host');
  const s = c.security;
  if (s.user !== undefined) args.push('--user', s.user);
  for (const g of s.groupAdd) args.push('--group-add', g);
  if (s.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  if (s.noNewPrivileges) args.push('--security-opt', 'no-new-privileges');
  if (s.privileged) args.push('--privileged');
  for (const cap of s.capAdd) args.push('--cap-add', cap);
  for (const cap of s.capDrop) args.push('--cap-drop', cap);
  if (c.stdin) args.push('--interactive');
  if (c.tty) args.push('--tty');
  if (c.memoryBytes !== undefined) args.push('--memory', String(Math.floor(c.memoryBytes)));
  if (c.cpus !== undefined) args.push('--cpus', String(c.cpus));
  for (const m of c.mounts) args.push('--volume', `${m.hostPath}:${m.containerPath}${m.overlay ? ':O' : m.readOnly ? ':ro' : ''}`);
  args.push(c.image);
  // with a command and no args the image's CMD must not be appended: podman drops it when --entrypoint is set
  if (c.args) args.push(...c.args);
  return args;
}

/**
 * `podman run` (attached) of the same container: one podman process creates and starts it, and leaves its
 * id in cidFile and its process's pid in pidFile (neither may exist yet) for the node to watch.
 */
export function containerRunArgs(c: ContainerSpec, files: { cidFile: string; pidFile: string }): string[] {
  return ['run', '--cidfile', files.cidFile, '--pidfile', files.pidFile, ...containerCreateArgs(c).slice(1)];
}

/** `<clusterId>-<ns>-<name>` cut to a length podman and the kernel (hostname) accept, plus a uid piece so a
 * pod re-created under the same name never meets the remains of the old one */
export function podmanPodName(clusterId: string, namespace: string, name: string, uid: string): string {
  const base = `${clusterId}-${namespace}-${name}`.replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 52);
  return `${base}-${uid.replace(/-/g, '').slice(0, 8)}`;
}
