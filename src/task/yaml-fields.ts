/**
 * Reading Concourse's YAML files (task configs, plan files) as Concourse does: YAML 1.1 (go-yaml v2 under
 * sigs.k8s.io/yaml, where `yes` and `on` are booleans), duplicate keys refused, whole numbers kept exact.
 * Every problem found is collected with the line it is on, so that one run of berth names them all.
 */
import { isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { parseLined } from '../files/yaml-lines.js';

/** A parsed file, its problems so far, and where a node is in it. */
export interface YamlFile {
  doc: Document;
  problems: string[];
  /** ` (line N)` of a node, for error sentences; '' when it has no place (a default). */
  at(node: Node | null | undefined): string;
  /** the lines above a node padded in front of its own text, so that a parser of the text counts the file's lines */
  sourceOf(node: Node): string;
}

/** Parses `text`; syntax errors are its first problems (each the first line of the parser's message). */
export function readConcourseYaml(text: string): YamlFile {
  // go-yaml v2 reads a timestamp-like plain scalar (2024-01-01) as the string it is when decoding into an
  // untyped value, as Concourse's params and args are: never a date (which would be refused as an arg, and
  // turned into 2024-01-01T00:00:00Z as a param).
  const { doc, pos, at } = parseLined(text, {
    intAsBigInt: true,
    uniqueKeys: true,
    version: '1.1',
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
  });
  return {
    doc,
    problems: doc.errors.map(syntaxProblem),
    at,
    sourceOf(node) {
      const [start, , end] = node.range ?? [0, 0, 0];
      const { line, col } = pos(start);
      return `${'\n'.repeat(line - 1)}${' '.repeat(col - 1)}${text.slice(start, end)}`;
    },
  };
}

export function keyOf(p: Pair): string {
  return isScalar(p.key) ? String(p.key.value) : String(p.key);
}

/** The value under `key` in a mapping. */
export function field(map: YAMLMap, key: string): Node | undefined {
  return map.items.find((p) => keyOf(p) === key)?.value as Node | undefined;
}

/** Not given, or given as null (`key:` with nothing after it): Concourse takes both as absent. */
export function absent(node: Node | undefined): node is undefined {
  return node === undefined || (isScalar(node) && node.value === null);
}

/** Every key of `map` not in `allowed`, as a problem: `unknown field <where><key> (line N): <hint>`. */
export function refuseUnknownKeys(y: YamlFile, map: YAMLMap, allowed: readonly string[], where: string, hint = `expected one of ${allowed.join(', ')}`): void {
  for (const p of map.items) {
    const k = keyOf(p);
    if (!allowed.includes(k)) y.problems.push(`unknown field ${where}${k}${y.at(p.key as Node)}: ${hint}`);
  }
}

/** A scalar as text (numbers and booleans as Concourse prints them); a problem for anything else. */
export function scalarText(y: YamlFile, node: Node | undefined, name: string): string | undefined {
  if (absent(node)) return undefined;
  if (isScalar(node) && ['string', 'number', 'bigint', 'boolean'].includes(typeof node.value)) return String(node.value);
  y.problems.push(`${name} must be a string${y.at(node)}`);
  return undefined;
}

/** A mapping node, or a problem naming it; undefined when absent too. */
export function mappingOf(y: YamlFile, node: Node | undefined, name: string): YAMLMap | undefined {
  if (absent(node)) return undefined;
  if (isMap(node)) return node;
  y.problems.push(`${name} must be a mapping${y.at(node)}`);
  return undefined;
}

/** Each item of the list under `key` that is a mapping, with its place (`key[i]`) and index; problems for the rest. */
export function eachMapping(y: YamlFile, map: YAMLMap, key: string, each: (m: YAMLMap, where: string, index: number) => void): void {
  const node = field(map, key);
  if (absent(node)) return;
  if (!isSeq(node)) {
    y.problems.push(`${key} must be a list${y.at(node)}`);
    return;
  }
  node.items.forEach((item, i) => {
    if (isMap(item)) each(item, `${key}[${i}]`, i);
    else y.problems.push(`${key}[${i}] must be a mapping${y.at(item as Node)}`);
  });
}

/** A parser's error as a sentence: its first line, without the source excerpt it announces, in berth's words where the parser's are its own API's. */
function syntaxProblem(e: { message: string }): string {
  const first = e.message.split('\n')[0].replace(/:$/, '');
  const at = / at line \d+, column \d+$/.exec(first)?.[0] ?? '';
  if (first.startsWith('Source contains multiple documents')) return `the file holds more than one YAML document (---)${at}: a Concourse file is one document`;
  return first;
}
