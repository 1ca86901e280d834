/**
 * A plan file (`berth task plan run plan.yml`): a Concourse job's `plan:` of steps, of which berth runs
 * `task`, `get`, `put`, `in_parallel` and `do`, with the `ensure`, `on_success` and `on_failure` hooks; beside
 * the plan, the `resource_types:` and `resources:` its get and put steps use (resource-config.ts). The file
 * is a mapping of those three, or a plain list of steps. Every error names the field and the line. Pure.
 */
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { absent, field, keyOf, mappingOf, readConcourseYaml } from './yaml-fields.js';
import { paramValue } from './params.js';
import { parseResources, parseResourceStep, type GetStep, type PlanYaml, type PutStep, type Resources } from './resource-config.js';

export interface Hooks {
  ensure?: Step;
  onSuccess?: Step;
  onFailure?: Step;
}

export type Step =
  | ({
      kind: 'task';
      name: string;
      where: string;
      file?: string;
      configText?: string;
      inputMapping: Record<string, string>;
      outputMapping: Record<string, string>;
      params: Record<string, string>;
      tags?: string[];
      /** `image:`: the artifact whose image the task runs in (step-image.ts) */
      image?: string;
    } & Hooks)
  /** limit: at most that many steps at once (all when absent); failFast: a failing step aborts the others and starts no more. */
  | ({ kind: 'in_parallel'; steps: Step[]; where: string; limit?: number; failFast: boolean } & Hooks)
  | ({ kind: 'do'; steps: Step[]; where: string } & Hooks)
  | GetStep
  | PutStep;

/** A plan file: its steps, the resources they get and put, and what was read but is ignored (warnings). */
export interface Plan {
  steps: Step[];
  resources: Resources;
  warnings: string[];
}

export class PlanConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid plan in ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'PlanConfigError';
  }
}

const HOOKS = ['ensure', 'on_success', 'on_failure'];
const PARALLEL_KEYS = ['steps', 'limit', 'fail_fast'];
const TASK_KEYS = ['task', 'file', 'config', 'image', 'input_mapping', 'output_mapping', 'params', 'tags', ...HOOKS];
const UNSUPPORTED: Record<string, string> = {
  privileged: 'privileged tasks are refused: berth runs every task locked down',
  on_error: 'on_error hooks are not supported yet (ensure runs after errors too)',
  on_abort: 'on_abort hooks are not supported yet',
  try: 'try steps are not supported yet',
  set_pipeline: 'set_pipeline needs a Concourse',
  load_var: 'load_var steps are not supported yet',
  across: 'across is not supported yet',
  timeout: "step timeouts are not supported yet (the pod's deadline is BERTH_TTL)",
  attempts: 'attempts are not supported yet',
  tags: 'worker tags place task steps only (get and put run where the scheduler puts them)',
};

/** A worker tag as a node label: the operator labels the nodes a tag names `tags.berth.dev/TAG=true`. */
export const TAG_LABEL_PREFIX = 'tags.berth.dev/';
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export function parsePlan(text: string, file: string): Step[] {
  return parsePlanFile(text, file).steps;
}

const ROOT_KEYS = ['plan', 'resource_types', 'resources'];

export function parsePlanFile(text: string, file: string): Plan {
  const read = readConcourseYaml(text);
  if (read.problems.length) throw new PlanConfigError(file, read.problems);
  const root = read.doc.contents;
  const y: PlanYaml = { ...read, warnings: [], handledElsewhere: (k: string) => HOOKS.includes(k) || k in UNSUPPORTED };
  const planNode = isMap(root) ? field(root, 'plan') : root;
  if (isMap(root))
    for (const p of root.items)
      if (!ROOT_KEYS.includes(keyOf(p)))
        y.problems.push(`unknown field ${keyOf(p)}${y.at(p.key as Node)}: a plan file has plan: (a list of steps), resource_types: and resources:`);
  const resources = parseResources(isMap(root) ? root : undefined, y);
  if (!isSeq(planNode)) throw new PlanConfigError(file, [...y.problems, `the file must hold plan: (a list of steps)${y.at((planNode ?? root) as Node)}`]);
  const reader = new StepReader(y, resources);
  const steps = planNode.items.map((s, i) => reader.step(s, `plan[${i}]`)).filter((s): s is Step => s !== undefined);
  if (y.problems.length) throw new PlanConfigError(file, y.problems);
  return { steps, resources, warnings: y.warnings };
}

/** Reads steps (recursively: groups and hooks hold steps), their problems going to the file's list. */
class StepReader {
  constructor(
    private readonly y: PlanYaml,
    private readonly resources: Resources,
  ) {}

  step(node: unknown, where: string): Step | undefined {
    const { y } = this;
    if (!isMap(node)) {
      y.problems.push(`${where} must be a mapping (a step)${y.at(node as Node)}`);
      return undefined;
    }
    for (const p of node.items) {
      const k = keyOf(p);
      const taskTags = k === 'tags' && field(node, 'task') !== undefined;
      if (UNSUPPORTED[k] && !taskTags) y.problems.push(`${where}: ${k}${y.at(p.key as Node)}: ${UNSUPPORTED[k]}`);
    }
    if (field(node, 'get') !== undefined || field(node, 'put') !== undefined) {
      const s = parseResourceStep(node, where, this.resources, y);
      return s && this.withHooks(s, node, where);
    }
    if (field(node, 'task') !== undefined) return this.withHooks(this.taskStep(node, where), node, where);
    for (const kind of ['in_parallel', 'do'] as const) {
      if (field(node, kind) === undefined) continue;
      const s = this.groupStep(node, kind, where);
      return s && this.withHooks(s, node, where);
    }
    if (!node.items.some((p) => UNSUPPORTED[keyOf(p)])) y.problems.push(`${where}: not a step berth knows${y.at(node)}: task, get, put, in_parallel or do`);
    return undefined;
  }

  private withHooks(s: Step, node: YAMLMap, where: string): Step {
    const ensure = field(node, 'ensure');
    const onSuccess = field(node, 'on_success');
    const onFailure = field(node, 'on_failure');
    if (ensure) s.ensure = this.step(ensure, `${where}.ensure`);
    if (onSuccess) s.onSuccess = this.step(onSuccess, `${where}.on_success`);
    if (onFailure) s.onFailure = this.step(onFailure, `${where}.on_failure`);
    return s;
  }

  private taskStep(node: YAMLMap, where: string): Step {
    const { y } = this;
    for (const p of node.items) {
      const k = keyOf(p);
      if (!TASK_KEYS.includes(k) && !UNSUPPORTED[k])
        y.problems.push(`${where}: unknown field ${k}${y.at(p.key as Node)}: a task step has ${TASK_KEYS.join(', ')}`);
    }
    const task = field(node, 'task');
    const name = isScalar(task) ? String(task.value ?? '') : '';
    if (!name) y.problems.push(`${where}: task needs a name${y.at(task)}`);
    const fileNode = field(node, 'file');
    const config = field(node, 'config');
    if (!fileNode === !config) y.problems.push(`${where} (task ${name}): give exactly one of file and config${y.at(node)}`);
    if (config && !isMap(config)) y.problems.push(`${where} (task ${name}): config must be a mapping (a task config)${y.at(config)}`);
    return {
      kind: 'task',
      name,
      where: y.at(node),
      ...(isScalar(fileNode) ? { file: String(fileNode.value) } : {}),
      // padded so that the task config parser reports the plan file's own lines
      ...(config && isMap(config) ? { configText: y.sourceOf(config) } : {}),
      inputMapping: this.stringMap(field(node, 'input_mapping'), `${where}.input_mapping`),
      outputMapping: this.stringMap(field(node, 'output_mapping'), `${where}.output_mapping`),
      params: this.stringMap(field(node, 'params'), `${where}.params`),
      ...this.tags(field(node, 'tags'), `${where}.tags`),
      ...this.imageArtifact(field(node, 'image'), `${where}.image`),
    };
  }

  /** `image: ARTIFACT`: a name, which the run looks up among the plan's artifacts when the step starts. */
  private imageArtifact(node: unknown, where: string): { image?: string } {
    if (node === undefined) return {};
    const value = isScalar(node) && typeof node.value === 'string' ? node.value : '';
    if (!value)
      this.y.problems.push(`${where}: give the name of an artifact of the plan (a get of an image resource, a task's output)${this.y.at(node as Node)}`);
    return value ? { image: value } : {};
  }

  /** `do: [steps]`, and `in_parallel:` as a list of steps or {steps: [...], limit, fail_fast}. */
  private groupStep(node: YAMLMap, kind: 'in_parallel' | 'do', where: string): Step | undefined {
    const { y } = this;
    for (const p of node.items) {
      const k = keyOf(p);
      if (k !== kind && !HOOKS.includes(k) && !UNSUPPORTED[k]) y.problems.push(`${where}: unknown field ${k}${y.at(p.key as Node)}`);
    }
    let inner = field(node, kind);
    const options = kind === 'in_parallel' && isMap(inner) ? this.parallelOptions(inner, `${where}.in_parallel`) : { failFast: false };
    if (kind === 'in_parallel' && isMap(inner)) inner = field(inner, 'steps');
    if (!isSeq(inner)) {
      y.problems.push(`${where}: ${kind} must be a list of steps${y.at(inner ?? node)}`);
      return undefined;
    }
    const steps = inner.items.map((s, i) => this.step(s, `${where}.${kind}[${i}]`)).filter((s): s is Step => s !== undefined);
    if (kind === 'do') return { kind, steps, where: y.at(node) };
    return { kind, steps, where: y.at(node), ...options };
  }

  /** `in_parallel: {steps, limit, fail_fast}`: limit a positive integer, fail_fast a boolean. */
  private parallelOptions(map: YAMLMap, where: string): { limit?: number; failFast: boolean } {
    const { y } = this;
    for (const p of map.items) {
      const k = keyOf(p);
      if (!PARALLEL_KEYS.includes(k)) y.problems.push(`${where}: unknown field ${k}${y.at(p.key as Node)}: in_parallel has ${PARALLEL_KEYS.join(', ')}`);
    }
    const limitNode = field(map, 'limit');
    const failFastNode = field(map, 'fail_fast');
    let limit: number | undefined;
    if (!absent(limitNode)) {
      const v = isScalar(limitNode) ? limitNode.value : undefined;
      if (typeof v === 'bigint' && v > 0n) limit = Number(v);
      else y.problems.push(`${where}.limit${y.at(limitNode)}: must be a whole number of steps above 0 (at most that many run at once)`);
    }
    let failFast = false;
    if (!absent(failFastNode)) {
      const v = isScalar(failFastNode) ? failFastNode.value : undefined;
      if (typeof v === 'boolean') failFast = v;
      else y.problems.push(`${where}.fail_fast${y.at(failFastNode)}: must be true or false`);
    }
    return { ...(limit !== undefined ? { limit } : {}), failFast };
  }

  /** Concourse runs a step with tags on a worker that has them all; berth on a node labeled with them all. */
  private tags(node: Node | undefined, where: string): { tags?: string[] } {
    if (node === undefined || absent(node)) return {};
    if (!isSeq(node) || !node.items.every((t) => isScalar(t) && typeof t.value === 'string')) {
      this.y.problems.push(`${where}: tags must be a list of strings${this.y.at(node)}`);
      return {};
    }
    const tags = node.items.map((t) => String((t as { value: string }).value));
    for (const tag of tags.filter((t) => !LABEL_NAME.test(t))) {
      this.y.problems.push(
        `${where}: tag "${tag}" cannot be a node label's name (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)${this.y.at(node)}`,
      );
    }
    return tags.length ? { tags } : {};
  }

  private stringMap(node: Node | undefined, name: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const p of mappingOf(this.y, node, name)?.items ?? []) out[keyOf(p)] = paramValue(p.value as Node | null);
    return out;
  }
}
