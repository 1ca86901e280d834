/**
 * Turns a `docker` command line into what berth should do: a Workload to run, or one of the small
 * sub-commands kpt and kustomize ask before running (version, image inspect/pull/ls, info).
 * Only docker's spelling rules are reproduced here; what each command means on a cluster is shim.ts.
 */
import path from 'node:path';
import type { PullPolicy, Workload, WorkloadMount, WorkloadUser } from '../runtime/workload.js';
import { sizeToQuantity } from '../runtime/size.js';
import { DockerHelpRequest, DockerUsageError, parseFlags, type FlagSpec } from './flags.js';

export { DockerUsageError } from './flags.js';

export interface RunCommand {
  kind: 'run';
  workload: Workload;
  /** `--rm`: berth always deletes the pod; kept so callers can tell what was asked. */
  remove: boolean;
  attach: { stdin: boolean; stdout: boolean; stderr: boolean };
}

export type DockerCommand =
  | RunCommand
  | { kind: 'version'; format?: string }
  | { kind: 'image-inspect'; images: string[]; format?: string }
  | { kind: 'image-pull'; image: string; quiet: boolean }
  | { kind: 'image-ls'; filters: string[]; format?: string; quiet: boolean }
  | { kind: 'info'; format?: string }
  /** `docker`, `docker --help`, `docker run --help`...: usage on stdout, exit 0, as the docker CLI does. */
  | { kind: 'help'; command?: string };

const RUN_FLAGS: FlagSpec[] = [
  { long: 'rm', type: 'bool' },
  { long: 'interactive', short: 'i', type: 'bool' },
  { long: 'tty', short: 't', type: 'bool' },
  { long: 'attach', short: 'a', type: 'list' },
  { long: 'env', short: 'e', type: 'list' },
  { long: 'network', type: 'value' },
  { long: 'net', type: 'value' },
  { long: 'user', short: 'u', type: 'value' },
  { long: 'security-opt', type: 'list' },
  { long: 'mount', type: 'list' },
  { long: 'volume', short: 'v', type: 'list' },
  { long: 'pull', type: 'value' },
  { long: 'entrypoint', type: 'value' },
  { long: 'workdir', short: 'w', type: 'value' },
  { long: 'name', type: 'value' },
  { long: 'label', short: 'l', type: 'list' },
  { long: 'memory', short: 'm', type: 'value' },
  { long: 'cpus', type: 'value' },
  // Known docker flags berth cannot honour on a cluster: parsed so the error names them precisely.
  { long: 'init', type: 'bool' },
  { long: 'detach', short: 'd', type: 'bool' },
  { long: 'privileged', type: 'bool' },
  { long: 'env-file', type: 'list' },
  { long: 'platform', type: 'value' },
];

const UNSUPPORTED_RUN_FLAGS = ['init', 'detach', 'privileged', 'env-file', 'platform'];

/** Docker's well-known user names; any other name needs the image's /etc/passwd, which berth cannot read. */
const KNOWN_USERS: Record<string, number> = { root: 0, nobody: 65534 };

/**
 * @param env the shim's own environment: `-e KEY` copies KEY from it, and is dropped when unset
 * @param cwd resolves relative `--mount source=` paths (kpt passes them as the user wrote them)
 */
export function parseDockerArgv(argv: string[], env: NodeJS.ProcessEnv, cwd: string): DockerCommand {
  // Global flags docker places before the sub-command are not part of what kpt/kustomize send.
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h') return { kind: 'help' };
  if (cmd === 'help') return { kind: 'help', command: rest[0] };
  try {
    return parseCommand(cmd, rest, env, cwd);
  } catch (err) {
    if (err instanceof DockerHelpRequest) return { kind: 'help', command: err.command };
    throw err;
  }
}

function parseCommand(cmd: string, rest: string[], env: NodeJS.ProcessEnv, cwd: string): DockerCommand {
  switch (cmd) {
    case 'run':
      return parseRun(rest, env, cwd);
    case 'container':
      if (rest[0] === 'run') return parseRun(rest.slice(1), env, cwd);
      break;
    case 'version':
      return parseVersion(rest);
    case 'info':
      return { kind: 'info', format: formatOf(parseFlags(rest, [FORMAT], 'info', true), 'info') };
    case 'image':
      return parseImage(rest);
    case 'pull':
      return parseImage(['pull', ...rest]);
    case 'images':
      return parseImage(['ls', ...rest]);
  }
  throw new DockerUsageError(`unknown command: "docker ${cmd}" (berth answers run, version, info, image)`);
}

const FORMAT: FlagSpec = { long: 'format', short: 'f', type: 'value' };

function formatOf(flags: ReturnType<typeof parseFlags>, command: string): string | undefined {
  void command;
  return flags.values.get('format')?.at(-1);
}

function parseVersion(rest: string[]): DockerCommand {
  const flags = parseFlags(rest, [FORMAT], 'version', true);
  if (flags.positionals.length > 0) throw new DockerUsageError(`"docker version" accepts no arguments.`, 'version');
  return { kind: 'version', format: formatOf(flags, 'version') };
}

function parseImage(rest: string[]): DockerCommand {
  const [sub, ...args] = rest;
  switch (sub) {
    case 'inspect': {
      const flags = parseFlags(args, [FORMAT], 'image inspect', true);
      if (flags.positionals.length === 0) throw new DockerUsageError(`"docker image inspect" requires at least 1 argument.`, 'image inspect');
      return { kind: 'image-inspect', images: flags.positionals, format: formatOf(flags, 'image inspect') };
    }
    case 'pull': {
      const flags = parseFlags(
        args,
        [
          { long: 'quiet', short: 'q', type: 'bool' },
          { long: 'platform', type: 'value' },
        ],
        'image pull',
        true,
      );
      if (flags.positionals.length !== 1) throw new DockerUsageError(`"docker image pull" requires exactly 1 argument.`, 'image pull');
      return { kind: 'image-pull', image: flags.positionals[0], quiet: flags.bools.get('quiet') ?? false };
    }
    case 'ls':
    case 'list': {
      const flags = parseFlags(args, [FORMAT, { long: 'filter', type: 'list' }, { long: 'quiet', short: 'q', type: 'bool' }], 'image ls', true);
      const filters = flags.values.get('filter') ?? [];
      // docker treats a positional as a reference filter: `docker images busybox`.
      for (const p of flags.positionals) filters.push(`reference=${p}`);
      return { kind: 'image-ls', filters, format: formatOf(flags, 'image ls'), quiet: flags.bools.get('quiet') ?? false };
    }
  }
  throw new DockerUsageError(`unknown command: "docker image ${sub ?? ''}" (berth answers image inspect, pull, ls)`);
}

function parseRun(rest: string[], env: NodeJS.ProcessEnv, cwd: string): RunCommand {
  const flags = parseFlags(rest, RUN_FLAGS, 'run', false);
  for (const name of UNSUPPORTED_RUN_FLAGS) {
    if (flags.bools.get(name) || flags.values.has(name)) {
      throw new DockerUsageError(`--${name} is not supported by berth (containers run as Kubernetes pods)`, 'run');
    }
  }
  const [image, ...args] = flags.positionals;
  if (!image) throw new DockerUsageError(`"docker run" requires at least 1 argument.`, 'run');
  const one = (long: string): string | undefined => flags.values.get(long)?.at(-1);

  const attach = parseAttach(flags.values.get('attach'));
  const interactive = flags.bools.get('interactive') ?? false;
  const workload: Workload = { image, stdin: interactive, tty: flags.bools.get('tty') ?? false };

  const entrypoint = one('entrypoint');
  if (entrypoint !== undefined) workload.command = entrypoint === '' ? [] : [entrypoint];
  if (args.length > 0) workload.args = args;

  const envList = parseEnv(flags.values.get('env') ?? [], env);
  if (envList.length > 0) workload.env = envList;

  const network = one('network') ?? one('net');
  if (network !== undefined) {
    if (network === '') throw new DockerUsageError('invalid argument "" for "--network" flag', 'run');
    workload.network = network === 'default' ? 'bridge' : network;
  }

  const user = one('user');
  if (user !== undefined) workload.user = parseUser(user);

  for (const opt of flags.values.get('security-opt') ?? []) {
    if (/^no-new-privileges([:=](true|1))?$/.test(opt)) workload.noNewPrivileges = true;
    else if (/^no-new-privileges[:=](false|0)$/.test(opt)) workload.noNewPrivileges = false;
    else throw new DockerUsageError(`--security-opt ${opt} is not supported by berth (only no-new-privileges)`, 'run');
  }

  const mounts: WorkloadMount[] = [];
  for (const spec of flags.values.get('mount') ?? []) mounts.push(parseMountFlag(spec, cwd));
  for (const spec of flags.values.get('volume') ?? []) mounts.push(parseVolumeFlag(spec));
  if (mounts.length > 0) workload.mounts = mounts;

  const pull = one('pull');
  if (pull !== undefined) workload.pullPolicy = parsePull(pull);

  const workdir = one('workdir');
  if (workdir !== undefined) {
    if (!workdir.startsWith('/')) throw new DockerUsageError(`the working directory '${workdir}' is invalid, it needs to be an absolute path`, 'run');
    workload.workingDir = workdir;
  }

  const name = one('name');
  if (name !== undefined) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name))
      throw new DockerUsageError(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`, 'run');
    workload.name = name;
  }

  const labels = flags.values.get('label');
  if (labels) {
    workload.labels = {};
    for (const l of labels) {
      const eq = l.indexOf('=');
      workload.labels[eq < 0 ? l : l.slice(0, eq)] = eq < 0 ? '' : l.slice(eq + 1);
    }
  }

  const memory = one('memory');
  const cpus = one('cpus');
  if (memory !== undefined || cpus !== undefined) {
    workload.resources = {};
    if (memory !== undefined) workload.resources.memory = dockerMemoryToQuantity(memory);
    if (cpus !== undefined) workload.resources.cpus = dockerCpusToQuantity(cpus);
  }

  return { kind: 'run', workload, remove: flags.bools.get('rm') ?? false, attach: attach ?? { stdin: interactive, stdout: true, stderr: true } };
}

function parseAttach(values: string[] | undefined): RunCommand['attach'] | undefined {
  if (!values) return undefined;
  const attach = { stdin: false, stdout: false, stderr: false };
  for (const v of values) {
    const key = v.toLowerCase();
    if (key !== 'stdin' && key !== 'stdout' && key !== 'stderr') {
      throw new DockerUsageError(`valid streams are STDIN, STDOUT and STDERR`, 'run');
    }
    attach[key] = true;
  }
  return attach;
}

/** `-e K=V` sets; `-e K` copies K from the shim's environment and is dropped when unset, as docker does. */
export function parseEnv(values: string[], env: NodeJS.ProcessEnv): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq === 0) throw new DockerUsageError(`invalid environment variable: ${v}`, 'run');
    if (eq > 0) out.push({ name: v.slice(0, eq), value: v.slice(eq + 1) });
    else if (env[v] !== undefined) out.push({ name: v, value: env[v] as string });
  }
  return out;
}

export function parseUser(text: string): WorkloadUser {
  const [u, g, extra] = text.split(':');
  if (extra !== undefined || u === '') throw new DockerUsageError(`invalid --user ${text}: expected a user, UID or UID:GID`, 'run');
  const uid = toId(u, 'user', text);
  const user: WorkloadUser = { uid };
  if (g !== undefined) user.gid = toId(g, 'group', text);
  return user;
}

function toId(part: string, what: 'user' | 'group', whole: string): number {
  if (/^\d+$/.test(part)) {
    const n = Number(part);
    if (n > 2147483647) throw new DockerUsageError(`invalid --user ${whole}: ${what} id out of range`, 'run');
    return n;
  }
  const known = KNOWN_USERS[part];
  if (known !== undefined) return known;
  throw new DockerUsageError(
    `cannot map ${what} name "${part}" of --user ${whole} to a number: a pod needs numeric ids (berth knows root and nobody; pass UID[:GID])`,
    'run',
  );
}

function parsePull(value: string): PullPolicy {
  switch (value) {
    case 'missing':
      return 'IfNotPresent';
    case 'always':
      return 'Always';
    case 'never':
      return 'Never';
  }
  throw new DockerUsageError(`invalid pull option: '${value}': must be one of "always", "missing" or "never"`, 'run');
}

/** docker's `--mount` is a CSV list of key=value (quotes allowed, as in encoding/csv). */
export function parseMountFlag(spec: string, cwd: string): WorkloadMount {
  let type = 'volume';
  let source: string | undefined;
  let target: string | undefined;
  let readOnly = false;
  for (const field of splitCsv(spec)) {
    const eq = field.indexOf('=');
    const key = (eq < 0 ? field : field.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? undefined : field.slice(eq + 1);
    switch (key) {
      case 'type':
        type = value ?? '';
        break;
      case 'source':
      case 'src':
        source = value;
        break;
      case 'target':
      case 'destination':
      case 'dst':
        target = value;
        break;
      case 'readonly':
      case 'ro':
        readOnly = value === undefined || /^(1|true)$/i.test(value);
        if (value !== undefined && !/^(0|1|true|false)$/i.test(value)) throw new DockerUsageError(`invalid value for readonly: ${value}`, 'run');
        break;
      case 'bind-propagation':
      case 'consistency':
        break;
      default:
        throw new DockerUsageError(`invalid field '${key}' must be a key=value pair in --mount ${spec} (berth supports type, source, target, readonly)`, 'run');
    }
  }
  if (type !== 'bind') throw new DockerUsageError(`--mount type=${type} is not supported by berth (only type=bind: the files are copied into the pod)`, 'run');
  if (!target) throw new DockerUsageError(`target is required in --mount ${spec}`, 'run');
  if (!source) throw new DockerUsageError(`source is required when specifying a bind mount: --mount ${spec}`, 'run');
  if (!target.startsWith('/')) throw new DockerUsageError(`invalid mount path: '${target}' mount path must be absolute`, 'run');
  return { source: path.resolve(cwd, source), target: path.posix.normalize(target), readOnly };
}

/** `-v SRC:DST[:OPTS]`: only host paths (named volumes do not exist on a cluster). */
export function parseVolumeFlag(spec: string): WorkloadMount {
  const parts = spec.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw new DockerUsageError(`invalid volume specification: '${spec}' (berth needs -v /host/path:/container/path[:ro])`, 'run');
  const [source, target, opts] = parts;
  if (!source.startsWith('/')) throw new DockerUsageError(`-v ${spec}: named volumes are not supported by berth; use an absolute host path`, 'run');
  if (!target.startsWith('/')) throw new DockerUsageError(`invalid volume specification: '${spec}': invalid mount config: mount path must be absolute`, 'run');
  let readOnly = false;
  for (const opt of (opts ?? '').split(',').filter(Boolean)) {
    if (opt === 'ro') readOnly = true;
    else if (opt === 'rw') readOnly = false;
    else if (!['z', 'Z', 'private', 'rprivate', 'shared', 'rshared', 'slave', 'rslave', 'consistent', 'cached', 'delegated'].includes(opt)) {
      throw new DockerUsageError(`invalid mode: ${opt} in -v ${spec}`, 'run');
    }
  }
  return { source: path.normalize(source), target: path.posix.normalize(target), readOnly };
}

function splitCsv(text: string): string[] {
  const fields: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(cur);
      cur = '';
    } else cur += c;
  }
  fields.push(cur);
  return fields.filter((f) => f.length > 0);
}

/** docker memory units are binary (`512m` = 512 MiB); a Kubernetes quantity keeps the same bytes. */
export function dockerMemoryToQuantity(text: string): string {
  const quantity = sizeToQuantity(text);
  if (quantity === undefined) throw new DockerUsageError(`invalid argument "${text}" for "-m, --memory" flag: invalid size: '${text}'`, 'run');
  return quantity;
}

/** `--cpus 1.5` → `1500m`. */
export function dockerCpusToQuantity(text: string): string {
  const n = Number(text);
  if (!/^\d*\.?\d+$/.test(text.trim()) || !Number.isFinite(n) || n <= 0) {
    throw new DockerUsageError(`invalid argument "${text}" for "--cpus" flag: failed to parse ${text} as a rational number`, 'run');
  }
  const milli = Math.round(n * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
