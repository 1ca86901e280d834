// What the node changes on this machine, and its removal: the pods' bridge, the cgroup that holds every pod,
// inotify limits, and the node's folders. Teardown also kills whatever still runs in the node's cgroup.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MACHINE, NET } from './layout.js';
import { alive } from './processes.js';
import { removeNodesBridge } from './node-network.js';

const CGROUP_FS = '/sys/fs/cgroup';
/** which state dir's cluster holds this machine's node: outside the node's folders, which down removes */
const OWNER_FILE = '/run/berth-k8s.owner';

function sh(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** cgroup v1 hierarchies (and the v2 one, where this machine keeps hugetlb) the kubelet's root must exist in */
function hierarchies(): string[] {
  return readdirSync(CGROUP_FS)
    .map((h) => join(CGROUP_FS, h))
    .filter((p) => existsSync(join(p, 'cgroup.procs')));
}

function raiseSysctl(key: string, min: number): void {
  const file = join('/proc/sys', key.replace(/\./g, '/'));
  if (Number(readFileSync(file, 'utf8')) < min) writeFileSync(file, String(min));
}

export function prepareHost(): void {
  // berth follows many logs at once; the stock limit of 128 inotify instances is kind's "too many open files"
  raiseSysctl('fs.inotify.max_user_instances', 8192);
  raiseSysctl('fs.inotify.max_user_watches', 524288);
  // this machine routes between the nodes
  raiseSysctl('net.ipv4.ip_forward', 1);
  for (const h of hierarchies()) makeCgroup(h, MACHINE.cgroupRoot);
  if (!sh('ip', ['link', 'show', NET.bridge]).ok) {
    execFileSync('ip', ['link', 'add', NET.bridge, 'type', 'bridge']);
    execFileSync('ip', ['addr', 'add', `${NET.nodeIp}/24`, 'dev', NET.bridge]);
  }
  execFileSync('ip', ['link', 'set', NET.bridge, 'up']);
  for (const d of [MACHINE.varLib, MACHINE.run]) mkdirSync(d, { recursive: true });
}

/** every pid in a cgroup and below it */
function pidsUnder(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const own = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const children = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => pidsUnder(join(dir, e.name)));
  return [...own, ...children];
}

function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroupTree(join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch {
    // a cgroup whose last task is still exiting is busy for a moment; the next teardown takes it
  }
}

/** Kills what runs in a node's cgroups (pods, shims; every node's by default) and removes the cgroups. */
export async function killCgroupTree(cgroup: string = MACHINE.cgroupRoot): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const pids = [...new Set(hierarchies().flatMap((h) => pidsUnder(join(h, cgroup))))];
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const h of hierarchies()) removeCgroupTree(join(h, cgroup));
}

/** iptables-save's words of a rule: comments come in double quotes, with spaces inside */
export function ruleWords(rule: string): string[] {
  return (rule.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? []).map((w) => (w.startsWith('"') ? w.slice(1, -1).replace(/\\(.)/g, '$1') : w));
}

/**
 * The chains the node's parts add (the kubelet's KUBE-FIREWALL and canaries, kube-proxy's and kube-router's KUBE-*,
 * the CNI plugins' CNI-*): unhooked from the built-in chains, flushed and deleted, for IPv4 and IPv6. kube-proxy's
 * and kube-router's own cleanup leave some behind (the kubelet's, and kube-router's hooks).
 */
function removeNodeChains(): void {
  const ours = (chain: string) => chain.startsWith('KUBE-') || chain.startsWith('CNI-');
  for (const [save, tables] of [
    ['iptables', ['nat', 'filter', 'mangle', 'raw']],
    ['ip6tables', ['nat', 'filter', 'mangle', 'raw']],
  ] as const) {
    for (const table of tables) {
      const lines = sh(`${save}-save`, ['-t', table]).out.split('\n');
      const chains = lines.filter((l) => l.startsWith(':') && ours(l.slice(1).split(' ')[0]!)).map((l) => l.slice(1).split(' ')[0]!);
      for (const rule of lines.filter((l) => l.startsWith('-A ') && !ours(l.split(' ')[1]!) && / -j (KUBE-|CNI-)/.test(l))) {
        sh(save, ['-t', table, '-D', ...ruleWords(rule.slice(3))]);
      }
      for (const c of chains) sh(save, ['-t', table, '-F', c]);
      for (const c of chains) sh(save, ['-t', table, '-X', c]);
    }
  }
}

/** Records that the node on this machine is this state dir's. */
export function claimMachine(layout: { stateDir: string }): void {
  writeFileSync(OWNER_FILE, layout.stateDir);
}

/** The state dir of another cluster whose API server still runs on this machine, if any. */
export function otherOwner(layout: { stateDir: string }): string | undefined {
  if (!existsSync(OWNER_FILE)) return undefined;
  const owner = readFileSync(OWNER_FILE, 'utf8').trim();
  if (owner === layout.stateDir) return undefined;
  const pidFile = join(owner, 'pids', 'kube-apiserver.pid');
  return existsSync(pidFile) && alive(Number(readFileSync(pidFile, 'utf8'))) ? owner : undefined;
}

export function removeHostState(): void {
  rmSync(OWNER_FILE, { force: true });
  removeNodeChains();
  // kube-router's address sets, once no rule refers to them
  for (const set of sh('ipset', ['list', '-n'])
    .out.split('\n')
    .filter((n) => /^(KUBE-|kube-router)/i.test(n)))
    sh('ipset', ['destroy', set]);
  if (sh('ip', ['link', 'show', NET.bridge]).ok) sh('ip', ['link', 'del', NET.bridge]);
  removeNodesBridge();
  for (const d of [MACHINE.varLib, MACHINE.run, `/var/lib/cni/results`]) {
    if (d.endsWith('results')) {
      for (const f of existsSync(d) ? readdirSync(d) : []) if (f.startsWith(`${MACHINE.cniNetworkName}-`)) rmSync(join(d, f), { force: true });
    } else rmSync(d, { recursive: true, force: true });
  }
}

/** Puts a process (and so its future children) into NAME under a node's cgroup, in every hierarchy. */
export function moveToCgroup(pid: number, nodeCgroup: string, name: string): void {
  for (const h of hierarchies()) writeFileSync(join(makeCgroup(h, join(nodeCgroup, name)), 'cgroup.procs'), String(pid));
}

/** Makes the cgroup PATH (and its parents) under a hierarchy's root and returns its folder. */
function makeCgroup(root: string, path: string): string {
  const parts = path.split('/').filter(Boolean);
  let dir = root;
  for (const part of parts) dir = makeCgroupStep(dir, part);
  return dir;
}

function makeCgroupStep(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  // a new cpuset cgroup starts with no cpus and no memory nodes: take the parent's, as kind's entrypoint does
  for (const f of ['cpuset.cpus', 'cpuset.mems']) {
    if (existsSync(join(dir, f)) && readFileSync(join(dir, f), 'utf8').trim() === '') writeFileSync(join(dir, f), readFileSync(join(parent, f), 'utf8'));
  }
  return dir;
}
