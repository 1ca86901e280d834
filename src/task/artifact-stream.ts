/**
 * Direct artifacts, pod to pod: the shell the helper containers run (busybox: sh, nc, tar, find). Pure.
 *
 * Producer: the pod's `outputs` container serves every output on ARTIFACT_PORT (one process per
 * connection, `nc -ll -e`). A client sends one line, `TOKEN OUTPUT`; a wrong token or an unknown output
 * gets nothing. The answer is `tar -c` of the output's folder followed by an empty marker entry, so the
 * marker is the archive's last entry: a stream cut anywhere lacks it. Before answering, every file is
 * opened once: tar skips a file it cannot read and still writes what follows, so an unreadable output
 * is refused (no marker) rather than passed on without that file.
 *
 * Consumer: the pod's `inputs` container fetches each artifact into a staging folder in the working
 * volume, takes it only if the marker arrived, and moves it to the input's path (a rename, no copy). A
 * failed fetch is tried again (the server answers as often as asked); after FETCH_ATTEMPTS the container
 * fails, and berth replaces the pod as for any broken copy of the inputs: the task has not run yet.
 */
import type { PodArtifact } from './artifacts.js';

export const ARTIFACT_PORT = 7788;
export const ARTIFACT_MARKER = '.berth-artifact-end';
const FETCH_ATTEMPTS = 5;
/** Seconds nc waits for a connection, and for the next bytes of a stream that stalls. */
const NC_TIMEOUT = 30;

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The `outputs` container's command: serve the outputs; keep the pod up (for exec reads) even if nc cannot listen. */
export function serveCommand(workDir: string, outputs: Array<{ name: string; path: string }>, token: string, ttlSeconds: number): string[] {
  return ['sh', '-c', `nc -ll -p ${ARTIFACT_PORT} -e sh -c ${q(serveAnswer(workDir, outputs, token))}\nexec sleep ${ttlSeconds}`];
}

/** What the server runs for one connection: the request line on stdin, the answer on stdout. */
export function serveAnswer(workDir: string, outputs: Array<{ name: string; path: string }>, token: string): string {
  const cases = outputs.map((o) => `  ${q(o.name)}) p=${q(o.path)} ;;`).join('\n');
  const answer = [
    'read -r tok name',
    `[ "$tok" = ${q(token)} ] || exit 1`,
    `case "$name" in\n${cases}\n  *) exit 1 ;;\nesac`,
    `cd ${q(workDir)} || exit 1`,
    // every file opened once: a file tar cannot read would be skipped while the marker still follows
    'find "$p" -type f -exec head -c 0 {} + >/dev/null || exit 1',
    `touch ${ARTIFACT_MARKER} || exit 1`,
    `exec tar -c -f - "$p" ${ARTIFACT_MARKER}`,
  ].join('\n');
  return answer;
}

/** Shell lines for the `inputs` container: fetch each artifact into its input's path, or exit 1. */
export function fetchScript(workDir: string, inputs: Array<{ name: string; path: string; from: PodArtifact }>): string {
  if (!inputs.length) return '';
  const lines = [
    // fetch STAGE IP PORT TOKEN OUTPUT OUTPUT_PATH DEST NAME
    'fetch() {',
    '  n=0',
    `  until rm -rf "$1" && mkdir -p "$1" && echo "$4 $5" | nc -w ${NC_TIMEOUT} "$2" "$3" | tar -x -o -f - -C "$1" && test -e "$1/${ARTIFACT_MARKER}"; do`,
    '    n=$((n + 1))',
    `    if [ $n -ge ${FETCH_ATTEMPTS} ]; then echo "berth: the artifact for input $8 could not be fetched from $2:$3 (output $5) in ${FETCH_ATTEMPTS} tries" >&2; return 1; fi`,
    '    sleep 1',
    '  done',
    '  if [ -e "$7" ]; then (cd "$1/$6" && tar -c -f - .) | tar -x -o -f - -C "$7" || return 1',
    '  else mkdir -p "$(dirname "$7")" && mv "$1/$6" "$7" || return 1; fi',
    '  rm -rf "$1"',
    '}',
  ];
  inputs.forEach((i, n) => {
    const f = i.from;
    lines.push(
      `fetch ${[`${workDir}/.berth-artifact-${n}`, f.ip, String(f.port), f.token, f.output, f.path, `${workDir}/${i.path}`, i.name].map(q).join(' ')} || exit 1`,
    );
  });
  return lines.join('\n');
}
