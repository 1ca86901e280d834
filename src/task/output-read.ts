/**
 * How an output folder is read out of the pod's `outputs` container, and what a failed read means. Pure.
 *
 * In Concourse an output is a volume mounted at its path: a task writes into it, it cannot remove it or put
 * a link in its place, and the worker streams the volume itself. Here the output is a folder of the pod's
 * working volume, so the read first checks that it still is that folder: through a link in its place, tar
 * would archive whatever the link points to (the helper container's /etc). Such a read, and one that tar
 * ended with an exit status (a file it may not open), fails the same way every time: it is not read again;
 * only a broken session is.
 */

import { posix } from 'node:path';

/** Exit statuses of the read's own checks (tar's are 1 and 2). */
const GONE = 90;
const LINK = 91;
const NOT_A_FOLDER = 92;

/**
 * The command that writes the folder `dir` (absolute) as a tar to stdout, or exits with one of
 * the statuses above. A link anywhere on the way (a folder of the output's path replaced) shows as a
 * physical path that differs from `dir`.
 */
export function outputTarCommand(dir: string): string[] {
  return readOutputScript(dir, 'exec tar -c -f - .');
}

/**
 * The command that exits 0 when `dir` is still the output's folder, else with one of the statuses above:
 * the same checks as a read, for an output served pod to pod (direct artifacts), which berth does not read.
 */
export function outputCheckCommand(dir: string): string[] {
  return readOutputScript(dir, 'exit 0');
}

function readOutputScript(dir: string, then: string): string[] {
  const script = [
    `if [ -L "$1" ]; then readlink "$1" >&2; exit ${LINK}; fi`,
    `[ -e "$1" ] || exit ${GONE}`,
    `[ -d "$1" ] || exit ${NOT_A_FOLDER}`,
    `cd "$1" || exit ${GONE}`,
    `here=$(pwd -P); [ "$here" = "$1" ] || { echo "$here" >&2; exit ${LINK}; }`,
    then,
  ].join('\n');
  // the path as `pwd -P` prints it: no `.`, `..`, doubled or trailing slash of task.yml's path
  return ['sh', '-c', script, 'read-output', posix.normalize(dir).replace(/(.)\/+$/, '$1')];
}

/** A read that would fail again: the run ends (exit 2) with this, at once. */
export class OutputReadRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputReadRefused';
  }
}

/**
 * What a read that ended with `exitCode` (not 0) says to the user, for the output `name` at `path` (relative to
 * the working directory, as task.yml names it). Every such end is final.
 */
export function outputReadFailure(name: string, path: string, exitCode: number, stderr: string): OutputReadRefused {
  const output = `output \`${name}\``;
  const says = stderr.trim();
  switch (exitCode) {
    case LINK:
      return new OutputReadRefused(
        `${output}: the task replaced its folder ${path} with a link${says ? ` (${path} leads to ${says.split('\n')[0]})` : ''}; berth does not follow it out of the task's working folder (a Concourse output is a volume, which a task cannot replace): write the output's files into ${path}`,
      );
    case GONE:
      return new OutputReadRefused(
        `${output}: the task removed its folder ${path} (a Concourse output is a volume, which a task cannot remove): write the output's files into ${path}`,
      );
    case NOT_A_FOLDER:
      return new OutputReadRefused(`${output}: the task put a file in the place of its folder ${path}: write the output's files into ${path}`);
  }
  const unreadable = unreadableFiles(says, path);
  if (unreadable.length) {
    return new OutputReadRefused(
      `${output}: the task left ${unreadable.join(', ')} unreadable to berth's outputs container: make ${unreadable.length > 1 ? 'them' : 'it'} readable (chmod a+r) or remove ${unreadable.length > 1 ? 'them' : 'it'} before the task ends`,
    );
  }
  return new OutputReadRefused(`${output}: tar could not read ${path} (exit ${exitCode})${says ? `: ${says}` : ''}`);
}

/** Files tar named as ones it could not open (busybox: `can't open './x': Permission denied`; GNU: `./x: Cannot open: ...`), as PATH/x with the reason. */
function unreadableFiles(stderr: string, path: string): string[] {
  const found: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^tar: can't open '(.+)': (.+)$/.exec(line) ?? /^tar: (.+): Cannot open: (.+)$/.exec(line);
    if (m) found.push(`${path}/${m[1].replace(/^\.\//, '')} (${m[2]})`);
  }
  return found;
}
