/**
 * A plan file (`berth task plan run plan.yml`): a Concourse job's `plan:` of steps, of which berth runs
 * `task`, `get`, `put`, `in_parallel` and `do`, with the `ensure`, `on_success` and `on_failure` hooks; beside
 * the plan, the `resource_types:` and `resources:` its get and put steps use (resource-config.ts). The file
 * is a mapping of those three, or a plain list of steps. Every error names the field and the line. Pure.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';
import { paramValue } from './params.js';
import { parseResources, parseResourceStep, type GetStep, type PutStep, type Resources } from './resource-config.js';

export interface Hooks {
  ensure?: Step;
  onSuccess?: Step;
  onFailure?: Step;
}

export type Step =
  | ({ kind: 'task'; name: string; where: string; file?: string; configText?: string; inputMapping: Record<string, string>; outputMapping: Record<string, string>; params: Record<string, string> } & Hooks)
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
const TASK_KEYS = ['task', 'file', 'config', 'input_mapping', 'output_mapping', 'params', ...HOOKS];
const UNSUPPORTED: Record<string, string> = {
  image:
    'a task step\'s `image:` names an artifact holding an image\'s root filesystem (a get of an image resource), which Concourse runs the task in; a pod\'s image must be a reference the cluster pulls from a registry, so no artifact can be one: give the task config an `image_resource` (type registry-image, with its repository and tag) or run the plan with --image REF',
  privileged: 'privileged tasks are refused: berth runs every task locked down',
  on_error: 'on_error hooks are not supported yet (ensure runs after errors too)',
  on_abort: 'on_abort hooks are not supported yet',
  try: 'try steps are not supported yet',
  set_pipeline: 'set_pipeline needs a Concourse',
  load_var: 'load_var steps are not supported yet',
  across: 'across is not supported yet',
  timeout: 'step timeouts are not supported yet (the pod\'s deadline is BERTH_TTL)',
  attempts: 'attempts are not supported yet',
  tags: 'worker tags do not apply to pods',
};

export function parsePlan(text: string, file: string): Step[] {
  return parsePlanFile(text, file).steps;
}

const ROOT_KEYS = ['plan', 'resource_types', 'resources'];

export function parsePlanFile(text: string, file: string): Plan {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, intAsBigInt: true, uniqueKeys: true, version: '1.1' });
  const problems: string[] = doc.errors.map((e) => e.message.split('\n')[0]);
  if (problems.length) throw new PlanConfigError(file, problems);
  const at = (node: Node | null | undefined): string => {
    const offset = node?.range?.[0];
    return offset === undefined ? '' : ` (line ${lines.linePos(offset).line})`;
  };
  const field = (map: YAMLMap, key: string): Node | undefined => map.items.find((p) => keyOf(p) === key)?.value as Node | undefined;

  /** The text of a node, padded so that the task config parser reports the plan file's own lines. */
  const sourceOf = (node: Node): string => {
    const [start, , end] = node.range ?? [0, 0, 0];
    const { line, col } = lines.linePos(start);
    return `${'\n'.repeat(line - 1)}${' '.repeat(col - 1)}${text.slice(start, end)}`;
  };
  const stringMap = (node: Node | undefined, name: string): Record<string, string> => {
    const out: Record<string, string> = {};
    if (node === undefined || (isScalar(node) && node.value === null)) return out;
    if (!isMap(node)) {
      problems.push(`${name} must be a mapping${at(node)}`);
      return out;
    }
    for (const p of node.items) out[keyOf(p)] = paramValue(p.value as Node | null);
    return out;
  };

  /** `in_parallel: {steps, limit, fail_fast}`: limit a positive integer, fail_fast a boolean. */
  const parallelOptions = (map: YAMLMap, where: string): { limit?: number; failFast: boolean } => {
    for (const p of map.items) {
      const k = keyOf(p);
      if (!PARALLEL_KEYS.includes(k)) problems.push(`${where}: unknown field ${k}${at(p.key as Node)}: in_parallel has ${PARALLEL_KEYS.join(', ')}`);
    }
    const limitNode = field(map, 'limit');
    const failFastNode = field(map, 'fail_fast');
    let limit: number | undefined;
    if (limitNode !== undefined && !(isScalar(limitNode) && limitNode.value === null)) {
      const v = isScalar(limitNode) ? limitNode.value : undefined;
      if (typeof v === 'bigint' && v > 0n) limit = Number(v);
      else problems.push(`${where}.limit${at(limitNode)}: must be a whole number of steps above 0 (at most that many run at once)`);
    }
    let failFast = false;
    if (failFastNode !== undefined && !(isScalar(failFastNode) && failFastNode.value === null)) {
      const v = isScalar(failFastNode) ? failFastNode.value : undefined;
      if (typeof v === 'boolean') failFast = v;
      else problems.push(`${where}.fail_fast${at(failFastNode)}: must be true or false`);
    }
    return { ...(limit !== undefined ? { limit } : {}), failFast };
  };

  const step = (node: unknown, where: string): Step | undefined => {
    if (!isMap(node)) {
      problems.push(`${where} must be a mapping (a step)${at(node as Node)}`);
      return undefined;
    }
    for (const p of node.items) {
      const k = keyOf(p);
      if (UNSUPPORTED[k]) problems.push(`${where}: ${k}${at(p.key as Node)}: ${UNSUPPORTED[k]}`);
    }
    const hooks = (s: Step): Step => {
      const ensure = field(node, 'ensure');
      const onSuccess = field(node, 'on_success');
      const onFailure = field(node, 'on_failure');
      if (ensure) s.ensure = step(ensure, `${where}.ensure`);
      if (onSuccess) s.onSuccess = step(onSuccess, `${where}.on_success`);
      if (onFailure) s.onFailure = step(onFailure, `${where}.on_failure`);
      return s;
    };
    if (field(node, 'get') !== undefined || field(node, 'put') !== undefined) {
      const s = parseResourceStep(node, where, resources, yaml);
      return s && hooks(s);
    }
    const task = field(node, 'task');
    if (task !== undefined) {
      for (const p of node.items) {
        const k = keyOf(p);
        if (!TASK_KEYS.includes(k) && !UNSUPPORTED[k]) problems.push(`${where}: unknown field ${k}${at(p.key as Node)}: a task step has ${TASK_KEYS.join(', ')}`);
      }
      const name = isScalar(task) ? String(task.value ?? '') : '';
      if (!name) problems.push(`${where}: task needs a name${at(task)}`);
      const fileNode = field(node, 'file');
      const config = field(node, 'config');
      if (!fileNode === !config) problems.push(`${where} (task ${name}): give exactly one of file and config${at(node)}`);
      if (config && !isMap(config)) problems.push(`${where} (task ${name}): config must be a mapping (a task config)${at(config)}`);
      return hooks({
        kind: 'task',
        name,
        where: at(node),
        ...(isScalar(fileNode) ? { file: String(fileNode.value) } : {}),
        ...(config && isMap(config) ? { configText: sourceOf(config) } : {}),
        inputMapping: stringMap(field(node, 'input_mapping'), `${where}.input_mapping`),
        outputMapping: stringMap(field(node, 'output_mapping'), `${where}.output_mapping`),
        params: stringMap(field(node, 'params'), `${where}.params`),
      });
    }
    for (const kind of ['in_parallel', 'do'] as const) {
      let inner = field(node, kind);
      if (inner === undefined) continue;
      for (const p of node.items) {
        const k = keyOf(p);
        if (k !== kind && !HOOKS.includes(k) && !UNSUPPORTED[k]) problems.push(`${where}: unknown field ${k}${at(p.key as Node)}`);
      }
      // in_parallel: a list of steps, or {steps: [...], limit, fail_fast}.
      const options = kind === 'in_parallel' && isMap(inner) ? parallelOptions(inner, `${where}.in_parallel`) : { failFast: false };
      if (kind === 'in_parallel' && isMap(inner)) inner = field(inner, 'steps');
      if (!isSeq(inner)) {
        problems.push(`${where}: ${kind} must be a list of steps${at(inner ?? node)}`);
        return undefined;
      }
      const steps = inner.items.map((s, i) => step(s, `${where}.${kind}[${i}]`)).filter((s): s is Step => s !== undefined);
      if (kind === 'do') return hooks({ kind, steps, where: at(node) });
      return hooks({ kind, steps, where: at(node), ...options });
    }
    if (!node.items.some((p) => UNSUPPORTED[keyOf(p)])) problems.push(`${where}: not a step berth knows${at(node)}: task, get, put, in_parallel or do`);
    return undefined;
  };

  const root = doc.contents;
  const planNode = isMap(root) ? field(root, 'plan') : root;
  if (isMap(root)) for (const p of root.items) if (!ROOT_KEYS.includes(keyOf(p))) problems.push(`unknown field ${keyOf(p)}${at(p.key as Node)}: a plan file has plan: (a list of steps), resource_types: and resources:`);
  const warnings: string[] = [];
  const yaml = { doc, problems, warnings, at, handledElsewhere: (k: string) => HOOKS.includes(k) || k in UNSUPPORTED };
  const resources = parseResources(isMap(root) ? root : undefined, yaml);
  if (!isSeq(planNode)) throw new PlanConfigError(file, [...problems, `the file must hold plan: (a list of steps)${at((planNode ?? root) as Node)}`]);
  const steps = planNode.items.map((s, i) => step(s, `plan[${i}]`)).filter((s): s is Step => s !== undefined);
  if (problems.length) throw new PlanConfigError(file, problems);
  return { steps, resources, warnings };
}

function keyOf(p: Pair): string {
  return isScalar(p.key) ? String(p.key.value) : String(p.key);
}
