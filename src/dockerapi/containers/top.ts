/**
 * `docker top` as dockerd answers it: `ps_args` (default `-ef`) read as procps' ps reads them, the container's
 * processes (proc-snapshot.ts) in its columns: `UID PID PPID C STIME TTY TIME CMD` for `-ef`,
 * `USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND` for `aux`, the named ones for `-o`.
 */
import { DockerError, badRequest } from '../http/http.js';
import { CLOCK_TICKS, type Proc, type ProcSnapshot } from './proc-snapshot.js';

/** What a column reads of a process; `now` is unix seconds. */
interface Context {
  snapshot: ProcSnapshot;
  now: number;
}
type Cell = (p: Proc, ctx: Context) => string;

interface Column {
  title: string;
  cell: Cell;
}

const userName = (p: Proc, ctx: Context): string => ctx.snapshot.users.get(p.uid) ?? String(p.uid);
const command = (p: Proc): string => (p.args.length ? p.args.join(' ') : `[${p.comm}]`);
const secondsRunning = (p: Proc, ctx: Context): number => Math.max(0, ctx.snapshot.uptime - p.startTicks / CLOCK_TICKS);
/** CPU time over time running, in tenths of a percent (procps' pcpu) */
const perMilleCpu = (p: Proc, ctx: Context): number => {
  const running = secondsRunning(p, ctx);
  return running > 0 ? Math.floor(((p.cpuTicks / CLOCK_TICKS) * 1000) / running) : 0;
};
const perMilleMem = (p: Proc, ctx: Context): number => (ctx.snapshot.memTotalKb ? Math.floor((p.rssKb * 1000) / ctx.snapshot.memTotalKb) : 0);
const tenths = (perMille: number): string => `${Math.floor(perMille / 10)}.${perMille % 10}`;
const two = (n: number): string => String(n).padStart(2, '0');

/** pts/N, ttyN or `?`, from the device number in stat */
function tty(p: Proc): string {
  const major = (p.ttyNr >> 8) & 0xfff;
  const minor = (p.ttyNr & 0xff) | ((p.ttyNr >> 12) & 0xfff00);
  if (major >= 136 && major <= 143) return `pts/${(major - 136) * 256 + minor}`;
  if (major === 4 && minor < 64) return `tty${minor}`;
  return '?';
}

/** When it started, in procps' STIME/START: the time within a day, the month and day within a year, else the year. */
function started(p: Proc, ctx: Context): string {
  const at = new Date((ctx.snapshot.bootTime + p.startTicks / CLOCK_TICKS) * 1000);
  const age = ctx.now - at.getTime() / 1000;
  if (age < 24 * 3600) return `${two(at.getHours())}:${two(at.getMinutes())}`;
  if (age < 365 * 24 * 3600) return `${at.toLocaleString('en-US', { month: 'short' })}${two(at.getDate())}`;
  return String(at.getFullYear());
}

/** CPU time as `[DD-]HH:MM:SS` (`-f`, `time`) */
function cpuTime(p: Proc): string {
  const s = Math.floor(p.cpuTicks / CLOCK_TICKS);
  const days = Math.floor(s / 86400);
  return `${days ? `${days}-` : ''}${two(Math.floor((s % 86400) / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** CPU time as `M:SS` (BSD's `u`) */
function cpuMinutes(p: Proc): string {
  const s = Math.floor(p.cpuTicks / CLOCK_TICKS);
  return `${Math.floor(s / 60)}:${two(s % 60)}`;
}

/** time since it started, `[[DD-]HH:]MM:SS` */
function elapsed(p: Proc, ctx: Context): string {
  const s = Math.floor(secondsRunning(p, ctx));
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const head = days ? `${days}-${two(hours)}:` : hours ? `${two(hours)}:` : '';
  return `${head}${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** BSD's STAT: the state, then `<`/`N` (priority), `s` (session leader), `l` (threads), `+` (foreground) */
function stat(p: Proc): string {
  return `${p.state}${p.nice < 0 ? '<' : p.nice > 0 ? 'N' : ''}${p.session === p.pid ? 's' : ''}${p.threads > 1 ? 'l' : ''}${p.ttyNr && p.tpgid === p.pgrp ? '+' : ''}`;
}

/** procps' format specifiers berth can fill from /proc, with their default titles */
const SPECIFIERS: Record<string, Column> = {
  pid: { title: 'PID', cell: (p) => String(p.pid) },
  ppid: { title: 'PPID', cell: (p) => String(p.ppid) },
  pgid: { title: 'PGID', cell: (p) => String(p.pgrp) },
  sid: { title: 'SID', cell: (p) => String(p.session) },
  uid: { title: 'UID', cell: (p) => String(p.uid) },
  euid: { title: 'EUID', cell: (p) => String(p.uid) },
  gid: { title: 'GID', cell: (p) => String(p.gid) },
  user: { title: 'USER', cell: userName },
  euser: { title: 'EUSER', cell: userName },
  comm: { title: 'COMMAND', cell: (p) => p.comm },
  ucomm: { title: 'COMMAND', cell: (p) => p.comm },
  args: { title: 'COMMAND', cell: command },
  command: { title: 'COMMAND', cell: command },
  cmd: { title: 'CMD', cell: command },
  c: { title: 'C', cell: (p, ctx) => String(Math.min(99, Math.floor(perMilleCpu(p, ctx) / 10))) },
  pcpu: { title: '%CPU', cell: (p, ctx) => tenths(perMilleCpu(p, ctx)) },
  '%cpu': { title: '%CPU', cell: (p, ctx) => tenths(perMilleCpu(p, ctx)) },
  pmem: { title: '%MEM', cell: (p, ctx) => tenths(perMilleMem(p, ctx)) },
  '%mem': { title: '%MEM', cell: (p, ctx) => tenths(perMilleMem(p, ctx)) },
  vsz: { title: 'VSZ', cell: (p) => String(p.vszKb) },
  vsize: { title: 'VSZ', cell: (p) => String(p.vszKb) },
  rss: { title: 'RSS', cell: (p) => String(p.rssKb) },
  rssize: { title: 'RSS', cell: (p) => String(p.rssKb) },
  tty: { title: 'TT', cell: tty },
  tt: { title: 'TT', cell: tty },
  stat: { title: 'STAT', cell: stat },
  s: { title: 'S', cell: (p) => p.state },
  state: { title: 'S', cell: (p) => p.state },
  stime: { title: 'STIME', cell: started },
  start_time: { title: 'START', cell: started },
  time: { title: 'TIME', cell: cpuTime },
  cputime: { title: 'TIME', cell: cpuTime },
  etime: { title: 'ELAPSED', cell: elapsed },
  nlwp: { title: 'NLWP', cell: (p) => String(p.threads) },
  ni: { title: 'NI', cell: (p) => String(p.nice) },
  nice: { title: 'NI', cell: (p) => String(p.nice) },
};

const col = (name: string, title?: string, cell?: Cell): Column => ({ title: title ?? SPECIFIERS[name].title, cell: cell ?? SPECIFIERS[name].cell });

/** `ps` without a format option */
const PLAIN = [col('pid'), col('tty', 'TTY'), col('time'), col('comm', 'CMD')];
/** `-f` */
const FULL = [col('uid', 'UID', userName), col('pid'), col('ppid'), col('c'), col('stime'), col('tty', 'TTY'), col('time'), col('cmd')];
/** BSD's `u` */
const USER = [
  col('user'),
  col('pid'),
  col('%cpu'),
  col('%mem'),
  col('vsz'),
  col('rss'),
  col('tty', 'TTY'),
  col('stat'),
  col('start_time'),
  col('time', 'TIME', cpuMinutes),
  col('command'),
];

/** UNIX options (after `-`) and BSD options (without) that only select processes or widen the output: the container's processes are all shown */
const SELECTING_UNIX = new Set(['e', 'A', 'a', 'd', 'N', 'w', 'T']);
const SELECTING_BSD = new Set(['a', 'x', 'w', 'e', 'g', 'r', 'T']);

const refusal = (what: string): DockerError =>
  badRequest(
    `ps option ${what} is not supported: berth serve's top reads the container's /proc and knows -e, -A, -f, -o <format> and BSD's a, u, x, o <format>`,
  );

/** The columns `ps_args` asks for. */
export function psColumns(psArgs: string): Column[] {
  const words = psArgs.trim() ? psArgs.trim().split(/\s+/) : ['-ef'];
  let style: 'plain' | 'full' | 'user' = 'plain';
  const custom: Column[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const unix = word.startsWith('-');
    const letters = unix ? word.slice(1) : word;
    if (unix && letters.startsWith('-')) throw refusal(word);
    for (let j = 0; j < letters.length; j++) {
      const letter = letters[j];
      if (letter === 'o' || (unix && letter === 'O')) {
        // the format is the rest of the word, else the next word
        const format = letters.slice(j + 1) || words[++i];
        if (!format) throw badRequest(`ps option ${unix ? '-' : ''}o needs a format list (as -o pid,args)`);
        custom.push(...formatColumns(format));
        break;
      }
      if (unix && letter === 'f') style = 'full';
      else if (!unix && letter === 'u') style = 'user';
      else if (!(unix ? SELECTING_UNIX : SELECTING_BSD).has(letter)) throw refusal(unix ? `-${letter}` : letter);
    }
  }
  const columns = custom.length ? custom : style === 'full' ? FULL : style === 'user' ? USER : PLAIN;
  // as dockerd, which finds each row's process by its PID column
  if (!columns.some((c) => c.title === 'PID')) throw new DockerError(500, "Couldn't find PID field in ps output");
  return columns;
}

/** `pid,args`, `pid user`, `pid=P` (a title of one's own, to the end of the list, as procps reads it) */
function formatColumns(format: string): Column[] {
  const columns: Column[] = [];
  const specs = format.split(/[,\s]+/).filter(Boolean);
  for (let i = 0; i < specs.length; i++) {
    const [name, ...titled] = specs[i].split('=');
    const spec = SPECIFIERS[name.toLowerCase()];
    if (!spec) throw badRequest(`ps: error: unknown user-defined format specifier "${name}" (berth serve's top knows ${Object.keys(SPECIFIERS).join(', ')})`);
    if (titled.length) {
      columns.push({ title: [titled.join('='), ...specs.slice(i + 1)].join(','), cell: spec.cell });
      break;
    }
    columns.push(spec);
  }
  return columns;
}

/** The Engine API's top answer. */
export function topTable(snapshot: ProcSnapshot, columns: Column[], now = Date.now() / 1000): { Titles: string[]; Processes: string[][] } {
  const ctx: Context = { snapshot, now };
  return { Titles: columns.map((c) => c.title), Processes: snapshot.procs.map((p) => columns.map((c) => c.cell(p, ctx))) };
}
