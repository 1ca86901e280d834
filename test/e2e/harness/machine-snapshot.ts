// What an upstream cluster could leave on this machine: its processes, mounts, network links and namespaces, iptables
// chains, cgroups and folders. Taken before `up` and after `down`, the two must be equal.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

// /proc/PID/comm holds 15 characters: kube-controller-manager is kube-controller
const PART_NAMES = /^(etcd|kube-|kubelet|containerd|coredns|local-path|catatonit)/;

export interface MachineSnapshot {
  processes: string[];
  mounts: string[];
  links: string[];
  /** the workers' network namespaces (berth-worker...); pods' cni-* ones are containerd's, inside its mount namespace */
  namespaces: string[];
  chains: string[];
  cgroups: string[];
  folders: string[];
}

/**
 * A killed process whose parent has not reaped it yet (a shim orphaned by its containerd waits for this machine's
 * init): it has ended and holds nothing but its entry in /proc.
 */
function exited(pid: string): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
}

function processes(): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        return PART_NAMES.test(name) && !exited(pid) ? [`${name}`] : [];
      } catch {
        return [];
      }
    })
    .sort();
}

/**
 * podman's own chains: the podman reference runs beside the cluster, and netavark leaves an empty NETAVARK-DN-*
 * chain behind once the last container publishing a port on its network is gone, and makes NETAVARK_FORWARD and
 * NETAVARK_ISOLATION_1/2 with its first network, which stay (on a fresh machine that is during a run). Not the
 * cluster's to remove.
 */
export const isPodmanChain = (chain: string): boolean => /^\S+ NETAVARK[-_]/.test(chain);

function chains(): string[] {
  return ['filter', 'nat', 'mangle', 'raw']
    .flatMap((table) =>
      execFileSync('iptables-save', ['-t', table], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.startsWith(':'))
        .map((l) => `${table} ${l.slice(1).split(' ')[0]}`),
    )
    .filter((chain) => !isPodmanChain(chain))
    .concat(
      execFileSync('ipset', ['list', '-n'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((s) => `ipset ${s}`),
    )
    .sort();
}

export function machineSnapshot(): MachineSnapshot {
  return {
    processes: processes(),
    mounts: readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => /berth-k8s|kubelet|containerd/.test(l))
      .map((l) => l.split(' ')[4]!)
      .sort(),
    links: execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(':')[1]!.trim().split('@')[0]!)
      .sort(),
    namespaces: existsSync('/run/netns')
      ? readdirSync('/run/netns')
          .filter((n) => n.startsWith('berth-'))
          .sort()
      : [],
    chains: chains(),
    cgroups: readdirSync('/sys/fs/cgroup')
      .filter((h) => existsSync(`/sys/fs/cgroup/${h}/berth-k8s`))
      .sort(),
    folders: ['/var/lib/berth-k8s', '/run/berth-k8s'].filter((d) => existsSync(d)),
  };
}

/** what `after` has that `before` had not, per kind; empty when nothing was left */
export function leftovers(before: MachineSnapshot, after: MachineSnapshot): string[] {
  return (Object.keys(after) as (keyof MachineSnapshot)[]).flatMap((kind) => {
    const had = new Set(before[kind]);
    return after[kind].filter((x) => !had.has(x)).map((x) => `${kind}: ${x}`);
  });
}

/**
 * What `down` left, once the processes it killed have had time to end (a process killed in uninterruptible sleep ends
 * when its I/O does): looked at again until nothing is left or `withinMs` has passed.
 */
export async function leftoversOnceSettled(before: MachineSnapshot, withinMs = 10_000): Promise<string[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const left = leftovers(before, machineSnapshot());
    if (left.length === 0 || Date.now() >= until) return left;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
