/**
 * The shell berth runs in a container (through exec) to stat a path and to tar it out. A GET is a single
 * exec: the stat lines go to stderr before tar starts writing stdout, so the stat header is known before
 * the body without a second exec (each exec costs a process start in the container runtime).
 */

export interface PathStat {
  name: string;
  size: number;
  /** POSIX st_mode. */
  mode: number;
  mtime: string;
  linkTarget: string;
}

/** `$1` = path; prints `berth-stat <size> <hex mode> <mtime>` and `berth-link <target or nothing>`; exit 1 when missing. */
const STAT_LINES =
  'st=$(stat -c "%s %f %Y" -- "$1") || exit 1; l=; if [ -L "$1" ]; then l=$(readlink -- "$1"); fi; printf "berth-stat %s\\nberth-link %s\\n" "$st" "$l"';

export function statArgv(path: string): string[] {
  return ['/bin/sh', '-c', STAT_LINES, 'berth-stat', path];
}

/** stat lines on stderr, then the tar of the path on stdout (as `tar -C dir base`, the way docker names entries). */
export function tarArgv(path: string): string[] {
  const trimmed = path.replace(/\/+$/, '') || '/';
  const slash = trimmed.lastIndexOf('/');
  const dir = slash <= 0 ? '/' : trimmed.slice(0, slash);
  const base = trimmed.slice(slash + 1) || '.';
  return ['/bin/sh', '-c', `{ ${STAT_LINES}; } >&2 && exec tar -c -f - -C "$2" "$3"`, 'berth-get', path, dir, base];
}

/** The stat of `path` from the two lines, or undefined while they have not both arrived whole. */
export function parseStatLines(text: string, path: string): PathStat | undefined {
  const stat = /^berth-stat (\d+) ([0-9a-fA-F]+) (\d+)\n/m.exec(text);
  const link = /^berth-link (.*)\n/m.exec(text);
  if (!stat || !link) return undefined;
  const base = path.replace(/\/+$/, '').split('/').pop() || '/';
  return { name: base, size: Number(stat[1]), mode: parseInt(stat[2], 16), mtime: new Date(Number(stat[3]) * 1000).toISOString(), linkTarget: link[1] };
}
