/**
 * How an output folder is read out of the pod's `outputs` container, and what a failed read means. Pure.
 * A read that tar ended with an exit status (a file it may not open) fails the same way every time: it is
 * not read again; only a broken session is.
 */

/** The command that writes the folder `dir` (absolute) as a tar to stdout. */
export function outputTarCommand(dir: string): string[] {
  return ['tar', '-c', '-f', '-', '-C', dir, '.'];
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
  const unreadable = unreadableFiles(says, path);
  if (unreadable.length) {
    return new OutputReadRefused(`${output}: the task left ${unreadable.join(', ')} unreadable to berth's outputs container: make ${unreadable.length > 1 ? 'them' : 'it'} readable (chmod a+r) or remove ${unreadable.length > 1 ? 'them' : 'it'} before the task ends`);
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
