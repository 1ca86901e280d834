/**
 * The processes of a container as `docker top` needs them, read from its /proc by one exec of `sh` and `cat`
 * (dockerd runs the host's `ps` and keeps the container's rows; a pod's node is not berth's to run ps on, and
 * images often lack ps or have busybox's, which takes no `-ef`).
 */

/** Field and record separators of the snapshot (ASCII US and RS: not in /proc's text). */
const FIELD = '\x1f';
const RECORD = '\x1e';

/**
 * Prints the shell's own pid, the machine's counters and /etc/passwd, then per process its pid, stat, status
 * and cmdline. The shell and its `cat`s are left out by the reader ($$ and its children).
 */
export const SNAPSHOT_SCRIPT = [
  `printf '%s\\037' "$$"; cat /proc/uptime; printf '\\037'; cat /proc/stat; printf '\\037'; cat /proc/meminfo; printf '\\037'; cat /etc/passwd 2>/dev/null`,
  `for d in /proc/[0-9]*; do printf '\\036%s\\037' "\${d#/proc/}"; cat "$d/stat" 2>/dev/null; printf '\\037'; cat "$d/status" 2>/dev/null; printf '\\037'; cat "$d/cmdline" 2>/dev/null; done`,
].join('\n');

export interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  ttyNr: number;
  tpgid: number;
  /** the one-letter state (R, S, D, Z, …) */
  state: string;
  comm: string;
  /** the arguments, empty for a kernel thread or a zombie */
  args: string[];
  uid: number;
  gid: number;
  nice: number;
  threads: number;
  /** user + system CPU time, in clock ticks */
  cpuTicks: number;
  /** since boot, in clock ticks */
  startTicks: number;
  vszKb: number;
  rssKb: number;
}

export interface ProcSnapshot {
  procs: Proc[];
  /** seconds since boot, when the snapshot was taken */
  uptime: number;
  /** boot time, unix seconds */
  bootTime: number;
  memTotalKb: number;
  /** uid → user name, from the container's /etc/passwd */
  users: Map<number, string>;
}

/** Linux's USER_HZ on every architecture Kubernetes runs. */
export const CLOCK_TICKS = 100;

/** The snapshot's text as processes; undefined when it is not one (the exec printed something else). */
export function parseSnapshot(text: string): ProcSnapshot | undefined {
  const [head, ...records] = text.split(RECORD);
  const [self, uptime, stat, meminfo, passwd = ''] = head.split(FIELD);
  const bootTime = Number(/^btime\s+(\d+)/m.exec(stat ?? '')?.[1]);
  if (!/^\d+$/.test(self ?? '') || !Number.isFinite(bootTime)) return undefined;
  const shell = Number(self);
  const procs = records.map(parseProc).filter((p): p is Proc => p !== undefined && p.pid !== shell && p.ppid !== shell);
  return {
    procs: procs.sort((a, b) => a.pid - b.pid),
    uptime: parseFloat(uptime ?? '0') || 0,
    bootTime,
    memTotalKb: Number(/^MemTotal:\s+(\d+)/m.exec(meminfo ?? '')?.[1] ?? 0),
    users: usersOf(passwd),
  };
}

function parseProc(record: string): Proc | undefined {
  const [pid, stat = '', status = '', cmdline = ''] = record.split(FIELD);
  // comm is within the first ( and the last ): it may hold spaces and parentheses
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return undefined; // ended before it was read
  const f = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  return {
    pid: Number(pid),
    comm: stat.slice(open + 1, close),
    state: f[0],
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    ttyNr: Number(f[4]),
    tpgid: Number(f[5]),
    cpuTicks: Number(f[11]) + Number(f[12]),
    nice: Number(f[16]),
    threads: Number(f[17]),
    startTicks: Number(f[19]),
    // the effective ids (Uid: real effective saved fs), as ps shows them
    uid: effectiveId(status, 'Uid'),
    gid: effectiveId(status, 'Gid'),
    vszKb: Number(/^VmSize:\s+(\d+)/m.exec(status)?.[1] ?? 0),
    rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0),
    args: cmdline.split('\0').filter((a, i, all) => a !== '' || i < all.length - 1),
  };
}

/** `Uid:` and `Gid:` of a status file list the real, effective, saved and filesystem ids. */
function effectiveId(status: string, key: 'Uid' | 'Gid'): number {
  return Number(new RegExp(`^${key}:\\s+\\d+\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
}

function usersOf(passwd: string): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of passwd.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name && /^\d+$/.test(uid ?? '') && !users.has(Number(uid))) users.set(Number(uid), name);
  }
  return users;
}
