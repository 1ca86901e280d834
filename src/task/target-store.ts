/**
 * Where `berth task` targets are kept: one YAML file per user ($XDG_CONFIG_HOME/berth/task-targets.yaml,
 * else ~/.config/berth/task-targets.yaml), written all or none with mode 0600 (it names kubeconfig files
 * and contexts, i.e. credentials). A file that cannot be read as targets is an error naming the file, the
 * place and the fix: berth never guesses what a damaged file meant, and never writes over it.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML, { isMap, isSeq, type Node as YamlNode } from 'yaml';
import { parseLined } from '../files/yaml-lines.js';
import { writeFilesAtomically } from '../files/atomic-write.js';

/** A place where task steps run: a namespace of a cluster, reached through a kubeconfig context. */
export interface Target {
  name: string;
  /** An absolute kubeconfig path; absent: resolved as kubectl does ($KUBECONFIG, ~/.kube/config). */
  kubeconfig?: string;
  context: string;
  namespace: string;
  /** An absolute path to a pod template file (a Pod, a PodTemplate or a template), laid under every step's pod. */
  podTemplate?: string;
  allowPrivileged: boolean;
  /** Landed: no new step starts there (`berth task target land`). */
  landed: boolean;
}

export class TargetStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetStoreError';
  }
}

/** Target names: what a label value and a file key can hold without quoting (as a kubeconfig context name, but shorter). */
const NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

export function checkTargetName(name: string): void {
  if (!NAME.test(name))
    throw new TargetStoreError(`invalid target name "${name}": use 1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit`);
}

export function targetsFile(env: NodeJS.ProcessEnv = process.env, homeDir = env.HOME ?? os.homedir()): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(homeDir, '.config'), 'berth', 'task-targets.yaml');
}

const FIELDS: Record<string, 'string' | 'boolean'> = {
  name: 'string',
  kubeconfig: 'string',
  context: 'string',
  namespace: 'string',
  podTemplate: 'string',
  allowPrivileged: 'boolean',
  landed: 'boolean',
};
const REQUIRED = ['name', 'context', 'namespace'];

/** The targets in `file`; none when it does not exist. */
export function readTargets(file: string): Target[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new TargetStoreError(`cannot read the task targets file ${file}: ${(err as Error).message}`);
  }
  return parseTargets(text, file);
}

export function parseTargets(text: string, file: string): Target[] {
  const { doc, pos, at } = parseLined(text, { prettyErrors: false });
  const fix = `repair it, or move it away and add the targets again (berth task target add)`;
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw new TargetStoreError(`the task targets file ${file} is not valid YAML (line ${pos(e.pos[0]).line}: ${e.message.split('\n')[0]}): ${fix}`);
  }
  if (doc.contents === null) return [];
  const bad = (what: string, node: YamlNode | null | undefined): TargetStoreError =>
    new TargetStoreError(`the task targets file ${file} is damaged: ${what}${at(node)}: ${fix}`);
  if (!isMap(doc.contents)) throw bad('it must be a mapping with `targets:`', doc.contents);
  const root = doc.contents;
  for (const pair of root.items) {
    const key = String((pair.key as { value?: unknown } | null)?.value ?? pair.key);
    if (key !== 'targets') throw bad(`unknown key \`${key}\``, pair.key as YamlNode);
  }
  const list = root.get('targets', true) as YamlNode | undefined;
  if (list === undefined || (list as { value?: unknown }).value === null) return [];
  if (!isSeq(list)) throw bad('`targets` must be a list', list);
  const seen = new Set<string>();
  return list.items.map((item, i) => {
    const node = item as YamlNode;
    if (!isMap(node)) throw bad(`targets[${i}] must be a mapping`, node);
    const t: Record<string, unknown> = {};
    for (const pair of node.items) {
      const key = String((pair.key as { value?: unknown } | null)?.value ?? pair.key);
      const value = (pair.value as { value?: unknown } | null)?.value;
      const type = FIELDS[key];
      if (!type) throw bad(`targets[${i}] has an unknown key \`${key}\``, pair.key as YamlNode);
      if (typeof value !== type || (type === 'string' && value === ''))
        throw bad(`targets[${i}].${key} must be ${type === 'string' ? 'a non-empty string' : 'true or false'}`, (pair.value as YamlNode) ?? node);
      t[key] = value;
    }
    for (const key of REQUIRED) if (t[key] === undefined) throw bad(`targets[${i}] has no \`${key}\``, node);
    const name = t.name as string;
    if (!NAME.test(name)) throw bad(`targets[${i}].name "${name}" is not a valid target name`, node);
    if (seen.has(name)) throw bad(`target ${name} is listed twice`, node);
    seen.add(name);
    return {
      name,
      ...(t.kubeconfig ? { kubeconfig: t.kubeconfig as string } : {}),
      context: t.context as string,
      namespace: t.namespace as string,
      ...(t.podTemplate ? { podTemplate: t.podTemplate as string } : {}),
      allowPrivileged: t.allowPrivileged === true,
      landed: t.landed === true,
    };
  });
}

export function formatTargets(targets: Target[]): string {
  const header = '# berth task targets: written by `berth task target add|land|unland|retire`\n';
  const sorted = [...targets].sort((a, b) => a.name.localeCompare(b.name));
  return header + YAML.stringify({ targets: sorted.map((t) => ({ ...t })) });
}

/** Replaces the file with `targets`, all or none, readable by its owner only. */
export function writeTargets(file: string, targets: Target[]): void {
  writeFilesAtomically(path.dirname(file), new Map([[path.basename(file), formatTargets(targets)]]), { mode: 0o600 });
}

/** Reads, changes and writes the targets (one berth at a time is the user's: no lock). */
export function updateTargets(file: string, change: (targets: Target[]) => Target[]): Target[] {
  const next = change(readTargets(file));
  writeTargets(file, next);
  return next;
}

export function findTarget(targets: Target[], name: string, file: string): Target {
  const t = targets.find((x) => x.name === name);
  if (!t) {
    const known = targets.map((x) => x.name);
    throw new TargetStoreError(
      `no target ${name} in ${file}${known.length ? ` (known: ${known.join(', ')})` : ''}: add it with \`berth task target add ${name} [--kubeconfig F] [--context C] [-n NS]\``,
    );
  }
  return t;
}
