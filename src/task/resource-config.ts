/**
 * The resource parts of a plan file, read as a Concourse pipeline declares them: `resource_types:` (images
 * with /opt/resource/check|in|out), `resources:` (a name, a type, a source) and the `get`/`put` steps of
 * the plan. What only a pipeline can give (version history, `passed:`, `every`) is refused; what only
 * schedules a pipeline (`check_every`, `trigger`, webhooks) is ignored with a warning. Every error names
 * the field and the line. Pure: plan-config.ts hands its YAML nodes here.
 */
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import type { Hooks } from './plan-config.js';
import { absent, eachMapping, field, keyOf, scalarText, type YamlFile } from './yaml-fields.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
/** A Concourse version: string keys and string values. */
export type Version = Record<string, string>;

export interface ResourceType {
  name: string;
  /** The image that holds /opt/resource/check, in and out. */
  image: string;
  /** `defaults:`, under the source of every resource of this type. */
  defaults: JsonObject;
}

export interface Resource {
  name: string;
  type: ResourceType;
  source: JsonObject;
  /** A resource's `version:` pins every get of it (unless the get pins its own). */
  version?: Version;
}

export interface Resources {
  resources: Map<string, Resource>;
}

export type GetStep = { kind: 'get'; name: string; resource: Resource; params: JsonObject; version: 'latest' | Version; where: string } & Hooks;
export type PutStep = {
  kind: 'put';
  name: string;
  resource: Resource;
  params: JsonObject;
  getParams: JsonObject;
  inputs: 'all' | 'detect' | string[];
  noGet: boolean;
  where: string;
} & Hooks;

/** What plan-config.ts shares with this module: the file read (problems, lines, document), and its warnings. */
export interface PlanYaml extends YamlFile {
  warnings: string[];
  /** Keys every step may carry, or that plan-config.ts reports itself (hooks, unsupported modifiers). */
  handledElsewhere(key: string): boolean;
}

const IMAGE_TYPES = ['registry-image', 'docker-image'];
const TYPE_KEYS = ['name', 'type', 'source', 'defaults', 'privileged', 'params', 'check_every', 'tags'];
const RESOURCE_KEYS = [
  'name',
  'type',
  'source',
  'version',
  'check_every',
  'check_timeout',
  'webhook_token',
  'public',
  'icon',
  'expose_build_created_by',
  'old_name',
  'tags',
];
const GET_KEYS = ['get', 'resource', 'params', 'version', 'passed', 'trigger'];
const PUT_KEYS = ['put', 'resource', 'params', 'get_params', 'inputs', 'no_get'];
const IGNORED: Record<string, string> = {
  check_every: 'berth checks a resource when a get step needs its latest version, not on a schedule',
  check_timeout: 'a check runs in a pod bounded by BERTH_TTL',
  webhook_token: 'no webhook reaches berth',
  public: 'berth has no web UI',
  icon: 'berth has no web UI',
  expose_build_created_by: 'berth has no builds of its own',
  old_name: 'berth keeps no version history to rename',
};

/** `resource_types:` and `resources:` of the plan file's root (a plain list of steps has neither). */
export function parseResources(root: YAMLMap | undefined, y: PlanYaml): Resources {
  const types = new Map<string, ResourceType>();
  const resources = new Map<string, Resource>();
  if (!root) return { resources };
  eachMapping(y, root, 'resource_types', (m, where) => {
    unknownKeys(m, TYPE_KEYS, where, y, `a resource type has ${TYPE_KEYS.join(', ')}`);
    ignoredKeys(m, where, y);
    const name = requiredName(m, where, y, types);
    const type = scalarText(y, field(m, 'type'), `${where}.type`);
    if (!type) y.problems.push(`${where}: missing type${y.at(m)}: registry-image or docker-image`);
    else if (!IMAGE_TYPES.includes(type))
      y.problems.push(`${where}.type ${type}${y.at(field(m, 'type'))}: berth runs resource types from images: registry-image or docker-image`);
    const source = objectOf(field(m, 'source'), `${where}.source`, y);
    const repository = typeof source.repository === 'string' ? source.repository : '';
    if (!repository) y.problems.push(`${where}: source.repository is missing${y.at(field(m, 'source') ?? m)}: the image of the resource type`);
    const tag = source.tag === undefined ? 'latest' : String(source.tag);
    const privileged = field(m, 'privileged');
    if (isScalar(privileged) && privileged.value === true)
      y.problems.push(`${where}.privileged${y.at(privileged)}: privileged resource types are refused: berth runs every container locked down`);
    if (field(m, 'tags') !== undefined) y.problems.push(`${where}.tags${y.at(field(m, 'tags'))}: worker tags do not apply to pods`);
    if (field(m, 'params') !== undefined) y.warnings.push(`${where}.params${y.at(field(m, 'params'))} is ignored: the cluster pulls the image`);
    if (name) types.set(name, { name, image: `${repository}:${tag}`, defaults: objectOf(field(m, 'defaults'), `${where}.defaults`, y) });
  });
  eachMapping(y, root, 'resources', (m, where) => {
    unknownKeys(m, RESOURCE_KEYS, where, y, `a resource has ${RESOURCE_KEYS.join(', ')}`);
    ignoredKeys(m, where, y);
    const name = requiredName(m, where, y, resources);
    if (field(m, 'tags') !== undefined) y.problems.push(`${where}.tags${y.at(field(m, 'tags'))}: worker tags do not apply to pods`);
    const typeName = scalarText(y, field(m, 'type'), `${where}.type`);
    const type = typeName ? types.get(typeName) : undefined;
    if (!typeName) y.problems.push(`${where}: missing type${y.at(m)}: the name of one of resource_types`);
    else if (!type) {
      y.problems.push(
        `${where}.type ${typeName}${y.at(field(m, 'type'))}: no resource type \`${typeName}\` in resource_types: berth has no built-in resource types; declare it, e.g. resource_types: [{name: ${typeName}, type: registry-image, source: {repository: concourse/${typeName}-resource}}]`,
      );
    }
    const versionNode = field(m, 'version');
    const version = versionNode === undefined ? undefined : versionOf(versionNode, `${where}.version`, y);
    if (name && type)
      resources.set(name, { name, type, source: { ...type.defaults, ...objectOf(field(m, 'source'), `${where}.source`, y) }, ...(version ? { version } : {}) });
  });
  return { resources };
}

/** A `get:` or `put:` step (its hooks are read by plan-config.ts). */
export function parseResourceStep(node: YAMLMap, where: string, resources: Resources, y: PlanYaml): GetStep | PutStep | undefined {
  const kind = field(node, 'get') !== undefined ? 'get' : 'put';
  const keys = kind === 'get' ? GET_KEYS : PUT_KEYS;
  unknownKeys(node, keys, where, y, `a ${kind} step has ${keys.join(', ')}`);
  const name = scalarText(y, field(node, kind), `${where}.${kind}`);
  if (!name) {
    y.problems.push(`${where}: ${kind} needs a name${y.at(node)}`);
    return undefined;
  }
  const label = `${where} (${kind} ${name})`;
  const resourceNode = field(node, 'resource');
  const resourceName = resourceNode === undefined ? name : scalarText(y, resourceNode, `${label}.resource`);
  const resource = resourceName ? resources.resources.get(resourceName) : undefined;
  if (resourceName && !resource) {
    const known = [...resources.resources.keys()].map((r) => `\`${r}\``).join(', ');
    y.problems.push(
      `${label}: no resource \`${resourceName}\`${y.at(resourceNode ?? node)}: declare it under resources: (${known ? `the plan has ${known}` : 'the plan has none'})`,
    );
  }
  const params = objectOf(field(node, 'params'), `${label}.params`, y);
  if (!resource) return undefined;
  if (kind === 'get') {
    const passed = field(node, 'passed');
    if (passed !== undefined)
      y.problems.push(
        `${label}: passed${y.at(passed)}: needs a pipeline's build history (the versions that passed those jobs); drop it, or pin the version with version: {...}`,
      );
    const trigger = field(node, 'trigger');
    if (trigger !== undefined) y.warnings.push(`${label}: trigger${y.at(trigger)} is ignored: nothing triggers a plan but berth task plan run`);
    const versionNode = field(node, 'version');
    let version: 'latest' | Version = resource.version ?? 'latest';
    if (versionNode !== undefined) {
      if (isScalar(versionNode) && versionNode.value === 'latest') version = 'latest';
      else if (isScalar(versionNode) && versionNode.value === 'every')
        y.problems.push(
          `${label}: version: every${y.at(versionNode)} needs a pipeline's version history: berth fetches one version (latest, or a pinned {key: value})`,
        );
      else version = versionOf(versionNode, `${label}.version`, y) ?? 'latest';
    }
    return { kind, name, resource, params, version, where: y.at(node) };
  }
  const noGet = field(node, 'no_get');
  if (noGet !== undefined && !(isScalar(noGet) && typeof noGet.value === 'boolean')) y.problems.push(`${label}.no_get must be true or false${y.at(noGet)}`);
  return {
    kind,
    name,
    resource,
    params,
    getParams: objectOf(field(node, 'get_params'), `${label}.get_params`, y),
    inputs: putInputs(field(node, 'inputs'), `${label}.inputs`, y),
    noGet: isScalar(noGet) && noGet.value === true,
    where: y.at(node),
  };
}

/** `inputs:` of a put: all (Concourse's default), detect (the artifacts its params name), or a list of names. */
function putInputs(node: Node | undefined, where: string, y: PlanYaml): PutStep['inputs'] {
  if (absent(node)) return 'all';
  if (isScalar(node) && (node.value === 'all' || node.value === 'detect')) return node.value;
  if (isSeq(node) && node.items.every((i) => isScalar(i) && typeof i.value === 'string')) return node.items.map((i) => String((i as { value: unknown }).value));
  y.problems.push(`${where}${y.at(node)}: all, detect or a list of artifact names`);
  return 'all';
}

/** The artifacts a put's params name, as Concourse's `inputs: detect` finds them: the first path segment of every string value. */
export function detectInputs(params: Json, artifacts: string[]): string[] {
  const found = new Set<string>();
  const walk = (v: Json): void => {
    if (typeof v === 'string') {
      const first = v.split('/')[0];
      if (artifacts.includes(first)) found.add(first);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(params);
  return [...found];
}

function requiredName(m: YAMLMap, where: string, y: PlanYaml, seen: Map<string, unknown>): string | undefined {
  const name = scalarText(y, field(m, 'name'), `${where}.name`);
  if (!name) y.problems.push(`${where}: missing name${y.at(m)}`);
  else if (seen.has(name)) y.problems.push(`${where}: duplicate name ${name}${y.at(field(m, 'name'))}`);
  return name;
}

function unknownKeys(m: YAMLMap, allowed: string[], where: string, y: PlanYaml, hint: string): void {
  for (const p of m.items) {
    const k = keyOf(p);
    if (!allowed.includes(k) && !y.handledElsewhere(k)) y.problems.push(`${where}: unknown field ${k}${y.at(p.key as Node)}: ${hint}`);
  }
}

function ignoredKeys(m: YAMLMap, where: string, y: PlanYaml): void {
  for (const p of m.items) {
    const k = keyOf(p);
    if (IGNORED[k]) y.warnings.push(`${where}.${k}${y.at(p.key as Node)} is ignored: ${IGNORED[k]}`);
  }
}

/** A mapping as JSON, as the resource will get it on stdin (absent or null: {}). */
function objectOf(node: Node | undefined, where: string, y: PlanYaml): JsonObject {
  if (absent(node)) return {};
  if (!isMap(node)) {
    y.problems.push(`${where} must be a mapping${y.at(node)}`);
    return {};
  }
  return toJson(node.toJS(y.doc)) as JsonObject;
}

/** A pinned version: a mapping of strings (Concourse's versions are map[string]string). */
function versionOf(node: Node, where: string, y: PlanYaml): Version | undefined {
  if (!isMap(node) || !node.items.length) {
    y.problems.push(`${where}${y.at(node)}: latest, or a pinned version (a mapping such as {ref: abc123})`);
    return undefined;
  }
  const version: Version = {};
  for (const p of node.items) {
    const v = p.value as Node | null;
    if (!isScalar(v) || v.value === null || typeof v.value === 'object') y.problems.push(`${where}.${keyOf(p)} must be a string${y.at(v ?? (p.key as Node))}`);
    else version[keyOf(p)] = String(v.value);
  }
  return version;
}

/** YAML's JS values as JSON values: whole numbers are read as BigInt (to keep them exact for params), here numbers again. */
function toJson(v: unknown): Json {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (v instanceof Date) return v.toISOString();
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  return v as Json;
}
