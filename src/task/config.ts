/**
 * A Concourse task config (task.yml) read as Concourse reads it (atc/task_config.go: unknown keys refused,
 * `platform` and `run.path` required, inputs and outputs named), checked before anything is created.
 * Every error names the field and the line it is on (the `yaml` package keeps each node's range).
 * Pure: text in, config or errors out.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';
import { paramValue } from './params.js';

export interface TaskInput {
  name: string;
  /** Relative to the working directory; defaults to the name. */
  path: string;
  optional: boolean;
}

export interface TaskOutput {
  name: string;
  path: string;
}

export interface ImageResource {
  type: string;
  repository?: string;
  tag?: string;
  digest?: string;
  /** ` (line N)`, for error sentences. */
  where: string;
}

export interface TaskConfig {
  platform: string;
  imageResource?: ImageResource;
  rootfsUri?: string;
  inputs: TaskInput[];
  outputs: TaskOutput[];
  caches: Array<{ path: string }>;
  /** Params as Concourse turns them into environment variables (params.ts). */
  params: Record<string, string>;
  run: { path: string; args: string[]; dir?: string; user?: string };
  containerLimits: { cpu?: number; memory?: number };
}

export class TaskConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid task configuration in ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'TaskConfigError';
  }
}

const TOP_KEYS = ['platform', 'image_resource', 'rootfs_uri', 'container_limits', 'params', 'run', 'inputs', 'outputs', 'caches'];
const IMAGE_KEYS = ['type', 'source', 'params', 'version', 'name'];
const RUN_KEYS = ['path', 'args', 'dir', 'user'];
const INPUT_KEYS = ['name', 'path', 'optional'];
const OUTPUT_KEYS = ['name', 'path'];
const CACHE_KEYS = ['path'];
const LIMIT_KEYS = ['cpu', 'memory'];

/** Parses and checks a task config; throws TaskConfigError listing every problem with its line. */
export function parseTaskConfig(text: string, file: string): TaskConfig {
  const lines = new LineCounter();
  // YAML 1.1, as Concourse's parser (go-yaml v2 under sigs.k8s.io/yaml): `yes`, `on` are booleans there.
  const doc = parseDocument(text, { lineCounter: lines, intAsBigInt: true, uniqueKeys: true, version: '1.1' });
  const problems: string[] = [];
  const at = (node: Node | null | undefined): string => {
    const offset = node?.range?.[0];
    return offset === undefined ? '' : ` (line ${lines.linePos(offset).line})`;
  };
  for (const e of doc.errors) problems.push(e.message.split('\n')[0]);
  if (problems.length) throw new TaskConfigError(file, problems);
  const root = doc.contents;
  if (!isMap(root)) throw new TaskConfigError(file, [`the file must be a YAML mapping of task fields${at(root as Node)}`]);

  const field = (map: YAMLMap, key: string): Node | undefined => map.items.find((p) => keyOf(p) === key)?.value as Node | undefined;
  const unknown = (map: YAMLMap, allowed: string[], where: string): void => {
    for (const p of map.items) {
      const k = keyOf(p);
      if (!allowed.includes(k)) problems.push(`unknown field ${where}${k}${at(p.key as Node)}: expected one of ${allowed.join(', ')}`);
    }
  };
  const str = (node: Node | undefined, name: string): string | undefined => {
    if (node === undefined || (isScalar(node) && node.value === null)) return undefined;
    if (isScalar(node) && (typeof node.value === 'string' || typeof node.value === 'number' || typeof node.value === 'bigint' || typeof node.value === 'boolean')) return String(node.value);
    problems.push(`${name} must be a string${at(node)}`);
    return undefined;
  };

  unknown(root, TOP_KEYS, '');
  const platform = str(field(root, 'platform'), 'platform');
  if (!platform) problems.push(`missing 'platform'${at(root)}: add e.g. "platform: linux"`);

  let imageResource: ImageResource | undefined;
  const imageNode = field(root, 'image_resource');
  if (imageNode !== undefined) {
    if (!isMap(imageNode)) problems.push(`image_resource must be a mapping${at(imageNode)}`);
    else {
      unknown(imageNode, IMAGE_KEYS, 'image_resource.');
      const source = field(imageNode, 'source');
      const version = field(imageNode, 'version');
      imageResource = {
        type: str(field(imageNode, 'type'), 'image_resource.type') ?? '',
        where: at(field(imageNode, 'type') ?? imageNode),
        ...(isMap(source) ? { repository: str(field(source, 'repository'), 'image_resource.source.repository'), tag: str(field(source, 'tag'), 'image_resource.source.tag') } : {}),
        ...(isMap(version) ? { digest: str(field(version, 'digest'), 'image_resource.version.digest') } : {}),
      };
      if (!imageResource.type) problems.push(`image_resource.type is missing${at(imageNode)}`);
    }
  }
  const rootfsUri = str(field(root, 'rootfs_uri'), 'rootfs_uri');

  const inputs: TaskInput[] = [];
  const outputs: TaskOutput[] = [];
  const caches: Array<{ path: string }> = [];
  const list = (key: string, allowed: string[], each: (m: YAMLMap, i: number) => void): void => {
    const node = field(root, key);
    if (node === undefined || (isScalar(node) && node.value === null)) return;
    if (!isSeq(node)) {
      problems.push(`${key} must be a list${at(node)}`);
      return;
    }
    node.items.forEach((item, i) => {
      if (!isMap(item)) problems.push(`${key}[${i}] must be a mapping${at(item as Node)}`);
      else {
        unknown(item, allowed, `${key}[${i}].`);
        each(item, i);
      }
    });
  };
  const seen = { inputs: new Map<string, string>(), outputs: new Map<string, string>() };
  const named = (kind: 'inputs' | 'outputs', m: YAMLMap, i: number): { name: string; path: string } | undefined => {
    const name = str(field(m, 'name'), `${kind}[${i}].name`);
    if (!name) {
      problems.push(`${kind === 'inputs' ? 'input' : 'output'} in position ${i} is missing a name${at(m)}`);
      return undefined;
    }
    const first = seen[kind].get(name);
    if (first !== undefined) problems.push(`${kind}[${i}]: duplicate ${kind === 'inputs' ? 'input' : 'output'} name "${name}"${at(m)} (first${first})`);
    seen[kind].set(name, at(m));
    const path = str(field(m, 'path'), `${kind}[${i}].path`) ?? name;
    if (path.startsWith('/') || path.split('/').includes('..')) problems.push(`${kind}[${i}].path "${path}" must stay inside the working directory${at(m)}`);
    return { name, path };
  };
  list('inputs', INPUT_KEYS, (m, i) => {
    const n = named('inputs', m, i);
    const optional = field(m, 'optional');
    if (optional !== undefined && !(isScalar(optional) && typeof optional.value === 'boolean')) problems.push(`inputs[${i}].optional must be true or false${at(optional)}`);
    if (n) inputs.push({ ...n, optional: isScalar(optional) && optional.value === true });
  });
  list('outputs', OUTPUT_KEYS, (m, i) => {
    const n = named('outputs', m, i);
    if (n) outputs.push(n);
  });
  list('caches', CACHE_KEYS, (m, i) => {
    const path = str(field(m, 'path'), `caches[${i}].path`);
    if (!path) problems.push(`caches[${i}] is missing a path${at(m)}`);
    else caches.push({ path });
  });
  // Two inputs (or two outputs) at one path would hide each other; an input and an output may share one.
  for (const kind of ['inputs', 'outputs'] as const) {
    const paths = new Map<string, string>();
    for (const x of kind === 'inputs' ? inputs : outputs) {
      const p = x.path.replace(/^\.\//, '').replace(/\/+$/, '');
      const other = paths.get(p);
      if (other !== undefined) problems.push(`${kind} "${other}" and "${x.name}" have the same path "${p}"`);
      paths.set(p, x.name);
    }
  }

  const params: Record<string, string> = {};
  const paramsNode = field(root, 'params');
  if (paramsNode !== undefined && !(isScalar(paramsNode) && paramsNode.value === null)) {
    if (!isMap(paramsNode)) problems.push(`params must be a mapping${at(paramsNode)}`);
    else for (const p of paramsNode.items) params[keyOf(p)] = paramValue(p.value as Node | null);
  }

  const runNode = field(root, 'run');
  const run: TaskConfig['run'] = { path: '', args: [] };
  if (runNode === undefined) problems.push(`missing 'run'${at(root)}: add run.path, the executable to run`);
  else if (!isMap(runNode)) problems.push(`run must be a mapping${at(runNode)}`);
  else {
    unknown(runNode, RUN_KEYS, 'run.');
    run.path = str(field(runNode, 'path'), 'run.path') ?? '';
    if (!run.path) problems.push(`missing path to executable to run: run.path${at(runNode)}`);
    const args = field(runNode, 'args');
    if (args !== undefined && !(isScalar(args) && args.value === null)) {
      if (!isSeq(args)) problems.push(`run.args must be a list${at(args)}`);
      else args.items.forEach((a, i) => run.args.push(str(a as Node, `run.args[${i}]`) ?? ''));
    }
    const dir = str(field(runNode, 'dir'), 'run.dir');
    if (dir) run.dir = dir;
    const user = str(field(runNode, 'user'), 'run.user');
    if (user) run.user = user;
  }

  const containerLimits: TaskConfig['containerLimits'] = {};
  const limits = field(root, 'container_limits');
  if (limits !== undefined && !(isScalar(limits) && limits.value === null)) {
    if (!isMap(limits)) problems.push(`container_limits must be a mapping${at(limits)}`);
    else {
      unknown(limits, LIMIT_KEYS, 'container_limits.');
      const cpu = field(limits, 'cpu');
      if (cpu !== undefined) {
        const n = isScalar(cpu) ? Number(cpu.value) : NaN;
        if (!Number.isInteger(n) || n < 0) problems.push(`container_limits.cpu must be a whole number of CPU shares${at(cpu)}`);
        else containerLimits.cpu = n;
      }
      const memory = field(limits, 'memory');
      if (memory !== undefined) {
        const bytes = isScalar(memory) ? memoryBytes(String(memory.value)) : undefined;
        if (bytes === undefined) problems.push(`container_limits.memory must be bytes or a size like 512MB or 1GB${at(memory)}`);
        else containerLimits.memory = bytes;
      }
    }
  }

  if (problems.length) throw new TaskConfigError(file, problems);
  return { platform: platform as string, imageResource, rootfsUri, inputs, outputs, caches, params, run, containerLimits };
}

/** `123`, `512MB`, `1gb`, `64K` (units of 1024 bytes, as Concourse's memory limits). */
export function memoryBytes(text: string): number | undefined {
  const m = /^\s*(\d+)\s*([KMGT]?)B?\s*$/i.exec(text);
  if (!m) return undefined;
  const power = ['', 'K', 'M', 'G', 'T'].indexOf(m[2].toUpperCase());
  return Number(m[1]) * 1024 ** power;
}

/**
 * The pod's image: `--image`, else image_resource (registry-image / docker-image: repository, then
 * `@digest` or `:tag`). rootfs_uri and other resource types need Concourse's own workers.
 */
export function imageOf(config: TaskConfig, override: string | undefined, file: string): string {
  if (override) return override;
  const ir = config.imageResource;
  if (config.rootfsUri) throw new TaskConfigError(file, [`rootfs_uri is not supported: berth runs tasks as pods, which need an image; use image_resource or --image`]);
  if (!ir) throw new TaskConfigError(file, [`no image: the task has no image_resource; give one (type: registry-image) or pass --image REF`]);
  if (ir.type !== 'registry-image' && ir.type !== 'docker-image') {
    throw new TaskConfigError(file, [`image_resource.type "${ir.type}"${ir.where} is not supported: berth pulls registry-image and docker-image images through the cluster; pass --image REF to run it with another image`]);
  }
  if (!ir.repository) throw new TaskConfigError(file, [`image_resource.source.repository is missing${ir.where}`]);
  if (ir.digest) return `${ir.repository}@${ir.digest}`;
  return `${ir.repository}:${ir.tag ?? 'latest'}`;
}

function keyOf(p: Pair): string {
  return isScalar(p.key) ? String(p.key.value) : String(p.key);
}
