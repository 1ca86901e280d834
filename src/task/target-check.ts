/**
 * `berth task target check`: can berth run steps there? Every permission a step needs is asked of the
 * cluster with a SelfSubjectAccessReview, and each one missing is named with the rule of the shipped
 * Role (deploy/rbac/task-role.yaml, read as shipped) that grants it: the fix is to apply that Role,
 * not to guess at verbs.
 */
import { readFileSync } from 'node:fs';
import YAML, { isMap, isSeq } from 'yaml';
import { parseLined } from '../files/yaml-lines.js';

/** One permission a step needs in its namespace, and why. */
export interface Need {
  verb: string;
  /** `pods`, or `pods/log` for a subresource. */
  resource: string;
  group: string;
  why: string;
}

/** What berth task does in a target's namespace (run-task.ts, target gc/retire); the shipped Role grants exactly these. */
export const TASK_NEEDS: Need[] = [
  { verb: 'create', resource: 'pods', group: '', why: "start each step's pod" },
  { verb: 'get', resource: 'pods', group: '', why: 'read a pod back when the answer to its create was lost' },
  { verb: 'list', resource: 'pods', group: '', why: "watch a step's pod, and find what berth left there for target gc and retire" },
  { verb: 'watch', resource: 'pods', group: '', why: "learn a step's exit code from its pod's status" },
  { verb: 'delete', resource: 'pods', group: '', why: "end each step's pod, and for target gc and retire" },
  { verb: 'create', resource: 'pods/attach', group: '', why: 'stream the inputs into the pod, on Kubernetes 1.35 and later' },
  { verb: 'get', resource: 'pods/attach', group: '', why: 'stream the inputs into the pod' },
  { verb: 'create', resource: 'pods/exec', group: '', why: 'read the outputs back, on Kubernetes 1.35 and later' },
  { verb: 'get', resource: 'pods/exec', group: '', why: 'read the outputs back' },
  { verb: 'get', resource: 'pods/log', group: '', why: "follow a step's stdout and stderr" },
  { verb: 'create', resource: 'secrets', group: '', why: 'hand a step its params in a Secret owned by its pod' },
  { verb: 'get', resource: 'secrets', group: '', why: 'read a params Secret back when the answer to its create was lost' },
  { verb: 'delete', resource: 'secrets', group: '', why: "remove a step's params Secret at its end" },
  { verb: 'create', resource: 'persistentvolumeclaims', group: '', why: "make a task's cache on its first run" },
  { verb: 'get', resource: 'persistentvolumeclaims', group: '', why: "find a task's cache" },
  { verb: 'patch', resource: 'persistentvolumeclaims', group: '', why: 'mark a cache used, which moves its expiry on' },
  { verb: 'list', resource: 'persistentvolumeclaims', group: '', why: 'list the caches for berth task caches ls and berth gc' },
  { verb: 'delete', resource: 'persistentvolumeclaims', group: '', why: 'delete caches for berth task caches rm and berth gc' },
];

export const needName = (n: Need): string => `${n.verb} ${n.resource}${n.group ? `.${n.group}` : ''}`;

export interface RoleRule {
  /** 1-based, as a reader counts the rules of the file. */
  number: number;
  line: number;
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export class RoleFileError extends Error {}

/** The rules of a Role file, with their lines. */
export function parseRoleRules(text: string, file: string): RoleRule[] {
  const { doc, pos } = parseLined(text);
  if (doc.errors.length) throw new RoleFileError(`${file} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  const rules = isMap(doc.contents) ? doc.contents.get('rules', true) : undefined;
  if (!isSeq(rules)) throw new RoleFileError(`${file} has no rules: list`);
  return rules.items.map((item, i) => {
    const plain = (YAML.isNode(item) ? item.toJSON() : item) as Record<string, unknown>;
    const strings = (k: string): string[] => (Array.isArray(plain?.[k]) ? (plain[k] as unknown[]).map(String) : []);
    const range = (item as { range?: [number, number, number] }).range;
    return { number: i + 1, line: range ? pos(range[0]).line : 0, apiGroups: strings('apiGroups'), resources: strings('resources'), verbs: strings('verbs') };
  });
}

/** Whether `rule` grants `need`, as RBAC matches (with its `*` wildcards). */
export function grants(rule: RoleRule, need: Need): boolean {
  const sub = need.resource.split('/')[1];
  const resourceMatches = rule.resources.some((r) => r === need.resource || r === '*' || (sub !== undefined && r === `*/${sub}`));
  return rule.apiGroups.some((g) => g === need.group || g === '*') && resourceMatches && rule.verbs.some((v) => v === need.verb || v === '*');
}

export function ruleFor(need: Need, rules: RoleRule[]): RoleRule | undefined {
  return rules.find((r) => grants(r, need));
}

export function describeRule(rule: RoleRule, file: string): string {
  const list = (xs: string[]): string => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  return `rule ${rule.number} of ${file} (line ${rule.line}: apiGroups ${list(rule.apiGroups)}, resources ${list(rule.resources)}, verbs ${list(rule.verbs)})`;
}

/** The sentence for one permission the identity lacks. */
export function missingSentence(need: Need, rules: RoleRule[], file: string): string {
  const rule = ruleFor(need, rules);
  const grantedBy = rule ? `granted by ${describeRule(rule, file)}` : `granted by no rule of ${file}: add one`;
  return `cannot ${needName(need)} (needed to ${need.why}): ${grantedBy}`;
}

export interface PermissionAnswer {
  need: Need;
  /** undefined: the server did not answer the review. */
  allowed: boolean | undefined;
}

/** Reads the Role as shipped with berth (the package carries deploy/). */
export function shippedRoleRules(): { rules: RoleRule[]; file: string } {
  const file = 'deploy/rbac/task-role.yaml';
  const url = new URL('../../../deploy/rbac/task-role.yaml', import.meta.url);
  try {
    return { rules: parseRoleRules(readFileSync(url, 'utf8'), file), file };
  } catch (err) {
    if (err instanceof RoleFileError) throw err;
    throw new RoleFileError(`cannot read ${file} from berth's package (${url.pathname}): ${(err as Error).message}`);
  }
}

/** The lines `target check` prints for the answers, and whether every permission is there. */
export function permissionReport(answers: PermissionAnswer[], rules: RoleRule[], file: string, namespace: string): { lines: string[]; problems: string[] } {
  const width = Math.max(...answers.map((a) => needName(a.need).length));
  const lines = answers.map((a) => `${a.allowed === true ? 'yes' : a.allowed === false ? 'no ' : '?  '}  ${needName(a.need).padEnd(width)}  ${a.need.why}`);
  const problems = answers
    .filter((a) => a.allowed !== true)
    .map((a) =>
      a.allowed === false
        ? missingSentence(a.need, rules, file)
        : `${needName(a.need)} could not be checked: the server did not answer the SelfSubjectAccessReview`,
    );
  if (problems.some((p) => p.startsWith('cannot '))) {
    problems.push(
      `fix: kubectl apply -n ${namespace} -f ${file}, and bind the Role berth-task to the identity the target uses (kubectl create rolebinding berth-task -n ${namespace} --role=berth-task --user=... or --serviceaccount=...)`,
    );
  }
  return { lines, problems };
}
