/**
 * A Concourse task config (task.yml) read as Concourse reads it (atc/task_config.go: unknown keys refused,
 * `platform` and `run.path` required, inputs and outputs named), checked before anything is created.
 * Every error names the field and the line it is on (the `yaml` package keeps each node's range).
 * Pure: text in, config or errors out.
 */
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { absent, eachMapping, field, keyOf, mappingOf, readConcourseYaml, refuseUnknownKeys, scalarText, type YamlFile } from './yaml-fields.js';
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
  const y = readConcourseYaml(text);
  if (y.problems.length) throw new TaskConfigError(file, y.problems);
  const root = y.doc.contents;
  if (!isMap(root)) throw new TaskConfigError(file, [`the file must be a YAML mapping of task fields${y.at(root as Node)}`]);
  refuseUnknownKeys(y, root, TOP_KEYS, '');
  const platform = scalarText(y, field(root, 'platform'), 'platform');
  if (!platform) y.problems.push(`missing 'platform'${y.at(root)}: add e.g. "platform: linux"`);
  const config = {
    platform: platform as string,
    imageResource: readImageResource(y, field(root, 'image_resource')),
    rootfsUri: scalarText(y, field(root, 'rootfs_uri'), 'rootfs_uri'),
    ...readArtifacts(y, root),
    params: readParams(y, field(root, 'params')),
    run: readRun(y, root),
    containerLimits: readLimits(y, field(root, 'container_limits')),
  };
  if (y.problems.length) throw new TaskConfigError(file, y.problems);
  return config;
}

function readImageResource(y: YamlFile, node: Node | undefined): ImageResource | undefined {
  if (node === undefined) return undefined;
  if (!isMap(node)) {
    y.problems.push(`image_resource must be a mapping${y.at(node)}`);
    return undefined;
  }
  refuseUnknownKeys(y, node, IMAGE_KEYS, 'image_resource.');
  const source = field(node, 'source');
  const version = field(node, 'version');
  const type = field(node, 'type');
  const image: ImageResource = {
    type: scalarText(y, type, 'image_resource.type') ?? '',
    where: y.at(type ?? node),
    ...(isMap(source)
      ? {
          repository: scalarText(y, field(source, 'repository'), 'image_resource.source.repository'),
          tag: scalarText(y, field(source, 'tag'), 'image_resource.source.tag'),
        }
      : {}),
    ...(isMap(version) ? { digest: scalarText(y, field(version, 'digest'), 'image_resource.version.digest') } : {}),
  };
  if (!image.type) y.problems.push(`image_resource.type is missing${y.at(node)}`);
  return image;
}

/** inputs, outputs and caches: named, inside the working directory, no two at one path. */
function readArtifacts(y: YamlFile, root: YAMLMap): Pick<TaskConfig, 'inputs' | 'outputs' | 'caches'> {
  const inputs: TaskInput[] = [];
  const outputs: TaskOutput[] = [];
  const caches: Array<{ path: string }> = [];
  const named = namedArtifacts(y);
  eachMapping(y, root, 'inputs', (m, where, i) => {
    refuseUnknownKeys(y, m, INPUT_KEYS, `${where}.`);
    const n = named('inputs', m, where, i);
    const optional = field(m, 'optional');
    if (optional !== undefined && !(isScalar(optional) && typeof optional.value === 'boolean'))
      y.problems.push(`${where}.optional must be true or false${y.at(optional)}`);
    if (n) inputs.push({ ...n, optional: isScalar(optional) && optional.value === true });
  });
  eachMapping(y, root, 'outputs', (m, where, i) => {
    refuseUnknownKeys(y, m, OUTPUT_KEYS, `${where}.`);
    const n = named('outputs', m, where, i);
    if (n) outputs.push(n);
  });
  eachMapping(y, root, 'caches', (m, where) => {
    refuseUnknownKeys(y, m, CACHE_KEYS, `${where}.`);
    const path = scalarText(y, field(m, 'path'), `${where}.path`);
    if (!path) y.problems.push(`${where} is missing a path${y.at(m)}`);
    else caches.push({ path });
  });
  // Two inputs (or two outputs) at one path would hide each other; an input and an output may share one.
  for (const [kind, list] of [
    ['inputs', inputs],
    ['outputs', outputs],
  ] as const) {
    const paths = new Map<string, string>();
    for (const x of list) {
      const p = x.path.replace(/^\.\//, '').replace(/\/+$/, '');
      const other = paths.get(p);
      if (other !== undefined) y.problems.push(`${kind} "${other}" and "${x.name}" have the same path "${p}"`);
      paths.set(p, x.name);
    }
  }
  return { inputs, outputs, caches };
}

/** An input's or output's name (unique among its kind) and path (the name by default). */
function namedArtifacts(y: YamlFile): (kind: 'inputs' | 'outputs', m: YAMLMap, where: string, index: number) => TaskOutput | undefined {
  const seen = { inputs: new Map<string, string>(), outputs: new Map<string, string>() };
  return (kind, m, where, index) => {
    const one = kind === 'inputs' ? 'input' : 'output';
    const name = scalarText(y, field(m, 'name'), `${where}.name`);
    if (!name) {
      y.problems.push(`${one} in position ${index} is missing a name${y.at(m)}`);
      return undefined;
    }
    const first = seen[kind].get(name);
    if (first !== undefined) y.problems.push(`${where}: duplicate ${one} name "${name}"${y.at(m)} (first${first})`);
    seen[kind].set(name, y.at(m));
    const path = scalarText(y, field(m, 'path'), `${where}.path`) ?? name;
    if (path.startsWith('/') || path.split('/').includes('..')) y.problems.push(`${where}.path "${path}" must stay inside the working directory${y.at(m)}`);
    return { name, path };
  };
}

function readParams(y: YamlFile, node: Node | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  const map = mappingOf(y, node, 'params');
  for (const p of map?.items ?? []) params[keyOf(p)] = paramValue(p.value as Node | null);
  return params;
}

function readRun(y: YamlFile, root: YAMLMap): TaskConfig['run'] {
  const node = field(root, 'run');
  const run: TaskConfig['run'] = { path: '', args: [] };
  if (node === undefined) y.problems.push(`missing 'run'${y.at(root)}: add run.path, the executable to run`);
  else if (!isMap(node)) y.problems.push(`run must be a mapping${y.at(node)}`);
  else {
    refuseUnknownKeys(y, node, RUN_KEYS, 'run.');
    run.path = scalarText(y, field(node, 'path'), 'run.path') ?? '';
    if (!run.path) y.problems.push(`missing path to executable to run: run.path${y.at(node)}`);
    const args = field(node, 'args');
    if (!absent(args)) {
      if (!isSeq(args)) y.problems.push(`run.args must be a list${y.at(args)}`);
      else args.items.forEach((a, i) => run.args.push(scalarText(y, a as Node, `run.args[${i}]`) ?? ''));
    }
    const dir = scalarText(y, field(node, 'dir'), 'run.dir');
    if (dir) run.dir = dir;
    const user = scalarText(y, field(node, 'user'), 'run.user');
    if (user) run.user = user;
  }
  return run;
}

function readLimits(y: YamlFile, node: Node | undefined): TaskConfig['containerLimits'] {
  const limits: TaskConfig['containerLimits'] = {};
  const map = mappingOf(y, node, 'container_limits');
  if (!map) return limits;
  refuseUnknownKeys(y, map, LIMIT_KEYS, 'container_limits.');
  const cpu = field(map, 'cpu');
  if (cpu !== undefined) {
    const n = isScalar(cpu) ? Number(cpu.value) : NaN;
    if (!Number.isInteger(n) || n < 0) y.problems.push(`container_limits.cpu must be a whole number of CPU shares${y.at(cpu)}`);
    else limits.cpu = n;
  }
  const memory = field(map, 'memory');
  if (memory !== undefined) {
    const bytes = isScalar(memory) ? memoryBytes(String(memory.value)) : undefined;
    if (bytes === undefined) y.problems.push(`container_limits.memory must be bytes or a size like 512MB or 1GB${y.at(memory)}`);
    else limits.memory = bytes;
  }
  return limits;
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
  if (config.rootfsUri)
    throw new TaskConfigError(file, [`rootfs_uri is not supported: berth runs tasks as pods, which need an image; use image_resource or --image`]);
  if (!ir) throw new TaskConfigError(file, [`no image: the task has no image_resource; give one (type: registry-image) or pass --image REF`]);
  if (ir.type !== 'registry-image' && ir.type !== 'docker-image') {
    throw new TaskConfigError(file, [
      `image_resource.type "${ir.type}"${ir.where} is not supported: berth pulls registry-image and docker-image images through the cluster; pass --image REF to run it with another image`,
    ]);
  }
  if (!ir.repository) throw new TaskConfigError(file, [`image_resource.source.repository is missing${ir.where}`]);
  if (ir.digest) return `${ir.repository}@${ir.digest}`;
  return `${ir.repository}:${ir.tag ?? 'latest'}`;
}
