// Local executables running the repo's KRM test functions (images/krm-fns) under this node, for tests
// that run functions without a cluster: berth's exec providers and kpt's `exec:` alike.
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { scratchDir } from '../../util/scratch.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));

/** A folder holding one script per named function; returns name → absolute path. */
export function functionScripts(names: string[]): { dir: string; path: Record<string, string> } {
  const dir = scratchDir('berth-fns-');
  // A copy outside the repo: the repo's package.json would make node read the CommonJS files as ESM.
  if (!existsSync(path.join(dir, 'fn'))) cpSync(path.join(repo, 'images/krm-fns/fn'), path.join(dir, 'fn'), { recursive: true });
  const paths: Record<string, string> = {};
  for (const name of names) {
    const file = path.join(dir, `${name}.sh`);
    writeFileSync(file, `#!/bin/sh\nKRM_FN=${name} NODE_PATH=${repo}node_modules exec ${process.execPath} ${dir}/fn/main.js\n`);
    chmodSync(file, 0o755);
    paths[name] = file;
  }
  return { dir, path: paths };
}

export function tree(files: Record<string, string>, prefix = 'berth-pkg-'): string {
  const dir = scratchDir(prefix);
  writeTree(dir, files);
  return dir;
}

export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
}

/** Every YAML file of a folder as plain data (formatting aside), by relative path. */
export function dataOf(dir: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const relName = rel ? `${rel}/${name}` : name;
      if (statSync(path.join(dir, relName)).isDirectory()) walk(relName);
      else out[relName] = parseAllDocuments(readFileSync(path.join(dir, relName), 'utf8')).map((d) => d.toJS() as unknown);
    }
  };
  walk('');
  return out;
}
