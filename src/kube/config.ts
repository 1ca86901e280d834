/**
 * Which cluster, which user, which namespace: resolved the way kubectl resolves them, so berth run
 * from a shell, a CI pod or a GitOps controller lands where kubectl would.
 */
import { readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from './client-node.js';
import YAML from 'yaml';
import { SERVICE_ACCOUNT_DIR } from './service-account-dir.js';

export { SERVICE_ACCOUNT_DIR };

export interface KubeTarget {
  kc: KubeConfig;
  namespace: string;
  /** Where the config came from, for messages: a file list, or `in-cluster`. */
  source: string;
}

export interface ResolveOptions {
  /** `--kubeconfig`: this file only, no merging (as kubectl). */
  kubeconfig?: string;
  /** Overrides the current context (BERTH_CONTEXT when absent). */
  context?: string;
  /** Overrides the namespace (BERTH_NAMESPACE when absent). */
  namespace?: string;
  env?: NodeJS.ProcessEnv;
  homeDir?: string;
  /** Root of the service-account files; tests point it elsewhere. */
  serviceAccountDir?: string;
}

export class KubeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

/** Fields holding file paths, relative to the kubeconfig file that names them (as client-go resolves them). */
const PATH_FIELDS: Record<string, string[]> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile', 'token-file'],
};

export function resolveKubeConfig(opts: ResolveOptions = {}): KubeTarget {
  const env = opts.env ?? process.env;
  const explicit = opts.kubeconfig;
  const context = opts.context ?? nonEmpty(env.BERTH_CONTEXT);
  const namespaceOverride = opts.namespace ?? nonEmpty(env.BERTH_NAMESPACE);
  const saDir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;

  let files: string[];
  if (explicit) {
    if (!existsSync(explicit)) throw new KubeConfigError(`kubeconfig ${explicit} does not exist (check --kubeconfig / the berth config)`);
    files = [explicit];
  } else if (nonEmpty(env.KUBECONFIG)) {
    // kubectl skips missing entries of KUBECONFIG silently; the first file to set a value wins.
    files = (env.KUBECONFIG as string).split(path.delimiter).filter((f) => f && existsSync(f));
  } else {
    const home = opts.homeDir ?? env.HOME ?? os.homedir();
    const def = path.join(home, '.kube', 'config');
    files = existsSync(def) ? [def] : [];
  }

  if (files.length === 0) {
    const host = nonEmpty(env.KUBERNETES_SERVICE_HOST);
    const port = nonEmpty(env.KUBERNETES_SERVICE_PORT);
    if (host && port && existsSync(path.join(saDir, 'token'))) return inCluster(host, port, saDir, env, namespaceOverride);
    throw new KubeConfigError(
      `no cluster configured: no kubeconfig at ${env.KUBECONFIG ? `KUBECONFIG=${env.KUBECONFIG}` : '~/.kube/config'} and not running in a pod (set KUBECONFIG or BERTH_KUBECONFIG)`,
    );
  }

  const merged = mergeKubeconfigFiles(files);
  if (context) merged['current-context'] = context;
  const kc = new KubeConfig();
  kc.loadFromString(JSON.stringify(merged));
  const currentName = kc.getCurrentContext();
  if (!currentName) throw new KubeConfigError(`no current context in ${files.join(', ')} (set BERTH_CONTEXT or run kubectl config use-context)`);
  const current = kc.getContextObject(currentName);
  if (!current) {
    throw new KubeConfigError(
      `context "${currentName}" is not in ${files.join(', ')} (known: ${
        kc
          .getContexts()
          .map((c) => c.name)
          .join(', ') || 'none'
      })`,
    );
  }
  if (!kc.getCurrentCluster()) throw new KubeConfigError(`context "${currentName}" names cluster "${current.cluster}", which is not defined`);
  return { kc, namespace: namespaceOverride ?? nonEmpty(current.namespace) ?? 'default', source: files.join(path.delimiter) };
}

function inCluster(host: string, port: string, saDir: string, env: NodeJS.ProcessEnv, override: string | undefined): KubeTarget {
  const kc = new KubeConfig();
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server, caFile: path.join(saDir, 'ca.crt'), skipTLSVerify: false }],
    // authProvider tokenFile: the projected token rotates; client-node re-reads it from the file.
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: path.join(saDir, 'token') } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' }],
    currentContext: 'in-cluster',
  });
  let namespace = override ?? nonEmpty(env.POD_NAMESPACE);
  if (!namespace) {
    try {
      namespace = nonEmpty(readFileSync(path.join(saDir, 'namespace'), 'utf8').trim());
    } catch {
      namespace = undefined;
    }
  }
  return { kc, namespace: namespace ?? 'default', source: 'in-cluster' };
}

type KubeconfigDoc = Record<string, unknown> & { 'current-context'?: string };

/** kubectl's merge: named entries from earlier files win, as does the first current-context set. */
export function mergeKubeconfigFiles(files: string[]): KubeconfigDoc {
  const merged: KubeconfigDoc = { apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [] };
  for (const file of files) {
    let doc: Record<string, unknown>;
    try {
      doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
    } catch (e) {
      throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(e as Error).message}`);
    }
    const dir = path.dirname(path.resolve(file));
    for (const section of ['clusters', 'users', 'contexts'] as const) {
      const target = merged[section] as Array<{ name: string }>;
      for (const entry of (doc[section] as Array<Record<string, unknown>> | undefined) ?? []) {
        if (target.some((t) => t.name === entry.name)) continue;
        target.push(absolutize(section, entry, dir) as { name: string });
      }
    }
    if (!merged['current-context'] && typeof doc['current-context'] === 'string' && doc['current-context']) {
      merged['current-context'] = doc['current-context'];
    }
  }
  return merged;
}

function absolutize(section: string, entry: Record<string, unknown>, dir: string): Record<string, unknown> {
  const fields = PATH_FIELDS[section];
  const inner = section === 'clusters' ? 'cluster' : section === 'users' ? 'user' : undefined;
  if (!fields || !inner || typeof entry[inner] !== 'object' || entry[inner] === null) return entry;
  const body = { ...(entry[inner] as Record<string, unknown>) };
  for (const f of fields) {
    const v = body[f];
    if (typeof v === 'string' && v && !path.isAbsolute(v)) body[f] = path.join(dir, v);
  }
  return { ...entry, [inner]: body };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
