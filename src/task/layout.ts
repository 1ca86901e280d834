/**
 * Where things are in the task's container, as Concourse lays them out, and which local folder feeds
 * which input (fly execute's -i/-o). Pure.
 *
 * - The step's working directory is /tmp/build/<8 hex>; each input and output is a folder at its path
 *   (default: its name) below it; outputs start empty.
 * - run.dir is relative to the working directory; the process starts there.
 * - run.path: absolute as is; relative with a slash, relative to the process's directory (as execve
 *   resolves it there); a bare name is looked up on PATH.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { PodArtifact } from './artifacts.js';
import type { TaskConfig } from './config.js';

export class TaskUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskUsageError';
  }
}

export interface Mapping {
  name: string;
  dir: string;
  /** An artifact of an earlier plan step: a tar of the folder's content, in memory (dir is then only its name). */
  tar?: Buffer;
  /** An artifact served by the pod of an earlier plan step (direct mode): the pod fetches it itself. */
  from?: PodArtifact;
}

export interface Layout {
  workDir: string;
  /** The process's directory: workDir joined with run.dir. */
  cwd: string;
  command: string[];
  /** Inputs that are fed, with their local folder and their path below workDir. */
  inputs: Array<{ name: string; path: string; dir: string; tar?: Buffer; from?: PodArtifact }>;
  /** Every output's path below workDir, the local folders it is downloaded into (each -o of its name, as fly does), and whether it is kept as an artifact (plans). */
  outputs: Array<{ name: string; path: string; dirs: string[]; capture?: boolean }>;
  user?: { uid: number; gid?: number };
}

export function newWorkDir(): string {
  return `/tmp/build/${randomBytes(4).toString('hex')}`;
}

/** `NAME=DIR` of -i and -o. */
export function parseMapping(text: string, flag: string): Mapping {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1) throw new TaskUsageError(`${flag} ${text}: expected NAME=DIR`);
  return { name: text.slice(0, eq), dir: text.slice(eq + 1) };
}

export function layOut(
  config: TaskConfig,
  opts: { inputs: Mapping[]; outputs: Mapping[]; args: string[]; workDir: string; cwd: string; capture?: string[]; inPlan?: boolean },
): Layout {
  const inputMappings = [...opts.inputs];
  // fly execute: the current directory is the input named as the directory is, unless an -i gives that input (not in a plan).
  const here = posix.basename(opts.cwd);
  if (!opts.inPlan && config.inputs.some((i) => i.name === here) && !inputMappings.some((m) => m.name === here))
    inputMappings.push({ name: here, dir: opts.cwd });
  for (const m of inputMappings) {
    const twice = inputMappings.find((x) => x !== m && x.name === m.name);
    if (twice) throw new TaskUsageError(`input \`${m.name}\` is given twice (-i ${m.name}=${m.dir}, -i ${m.name}=${twice.dir}): give each input one folder`);
    if (!config.inputs.some((i) => i.name === m.name))
      throw new TaskUsageError(`unknown input \`${m.name}\` (-i ${m.name}=...): the task's inputs are ${names(config.inputs)}`);
  }
  for (const m of opts.outputs) {
    if (!config.outputs.some((o) => o.name === m.name))
      throw new TaskUsageError(`unknown output \`${m.name}\` (-o ${m.name}=...): the task's outputs are ${names(config.outputs)}`);
  }
  const inputs: Layout['inputs'] = [];
  for (const i of config.inputs) {
    const m = inputMappings.find((x) => x.name === i.name);
    if (m) inputs.push({ name: i.name, path: clean(i.path), dir: m.dir, ...(m.tar ? { tar: m.tar } : {}), ...(m.from ? { from: m.from } : {}) });
    else if (!i.optional)
      throw new TaskUsageError(
        opts.inPlan
          ? `missing required input \`${i.name}\`: no artifact of that name (produce it in an earlier step, map it with input_mapping, or pass -i ${i.name}=DIR)`
          : `missing required input \`${i.name}\`: pass -i ${i.name}=DIR`,
      );
  }
  const outputs = config.outputs.map((o) => ({
    name: o.name,
    path: clean(o.path),
    dirs: opts.outputs.filter((m) => m.name === o.name).map((m) => m.dir),
    ...(opts.capture?.includes(o.name) ? { capture: true } : {}),
  }));
  const cwd = config.run.dir ? posix.resolve(opts.workDir, config.run.dir) : opts.workDir;
  const path = config.run.path;
  const executable = path.startsWith('/') || !path.includes('/') ? path : posix.resolve(cwd, path);
  return {
    workDir: opts.workDir,
    cwd,
    command: [executable, ...config.run.args, ...opts.args],
    inputs,
    outputs,
    ...(config.run.user ? { user: parseUser(config.run.user) } : {}),
  };
}

/** run.user: a pod runs numeric ids (it cannot read the image's /etc/passwd); `root` is 0. */
export function parseUser(user: string): { uid: number; gid?: number } {
  if (user === 'root') return { uid: 0 };
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new TaskUsageError(`run.user "${user}" must be numeric (uid or uid:gid) or root: a pod cannot look names up in the image's /etc/passwd`);
  return { uid: Number(m[1]), ...(m[2] !== undefined ? { gid: Number(m[2]) } : {}) };
}

function clean(p: string): string {
  const n = posix.normalize(p).replace(/\/+$/, '');
  return n === '' ? '.' : n;
}

function names(list: Array<{ name: string }>): string {
  return list.length ? list.map((x) => `\`${x.name}\``).join(', ') : '(none)';
}
