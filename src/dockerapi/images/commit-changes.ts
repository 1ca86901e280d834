/**
 * `docker commit --change`: the Dockerfile instructions dockerd applies to the committed image's config (CMD,
 * ENTRYPOINT, ENV, EXPOSE, LABEL, USER, VOLUME, WORKDIR, STOPSIGNAL), each refused in dockerd's words when it is
 * another or malformed.
 */
import { badRequest } from '../http/http.js';
import type { ContainerConfig } from '../../registry/oci-image.js';

const INSTRUCTIONS = ['CMD', 'ENTRYPOINT', 'ENV', 'EXPOSE', 'LABEL', 'USER', 'VOLUME', 'WORKDIR', 'STOPSIGNAL'];

/**
 * The config after every change, in order (a later ENV of the same key wins, as in a Dockerfile). dockerd reads the
 * changes as the lines of one Dockerfile, so a value may hold several (testcontainers-node joins its list with "\n").
 */
export function applyChanges(config: ContainerConfig, changes: readonly string[]): ContainerConfig {
  return changes.flatMap((value) => value.split(/\r?\n/)).reduce((c, change) => applyChange(c, change.trim()), { ...config });
}

function applyChange(config: ContainerConfig, change: string): ContainerConfig {
  if (!change) return config;
  const [word = '', ...rest] = change.split(/\s+/);
  const instruction = word.toUpperCase();
  const args = change.slice(word.length).trim();
  if (!INSTRUCTIONS.includes(instruction)) throw badRequest(`${word} is not a valid change command`);
  if (!args && rest.length === 0) throw badRequest(`${instruction} requires at least one argument`);
  switch (instruction) {
    case 'CMD':
      return { ...config, Cmd: commandForm(args, instruction) };
    case 'ENTRYPOINT':
      return { ...config, Entrypoint: commandForm(args, instruction) };
    case 'ENV':
      return { ...config, Env: mergeEnv(config.Env ?? [], pairs(args, instruction)) };
    case 'LABEL':
      return { ...config, Labels: { ...(config.Labels ?? {}), ...Object.fromEntries(pairs(args, instruction)) } };
    case 'EXPOSE':
      return { ...config, ExposedPorts: { ...(config.ExposedPorts ?? {}), ...Object.fromEntries(args.split(/\s+/).map((p) => [exposedPort(p), {}])) } };
    case 'VOLUME':
      return { ...config, Volumes: { ...(config.Volumes ?? {}), ...Object.fromEntries(listForm(args).map((v) => [v, {}])) } };
    case 'USER':
      return { ...config, User: args };
    case 'WORKDIR':
      return { ...config, WorkingDir: args };
    default:
      return { ...config, StopSignal: args };
  }
}

/** `["a", "b"]` as given; anything else is the shell form, run by /bin/sh -c. */
function commandForm(args: string, instruction: string): string[] {
  if (!args.startsWith('[')) return ['/bin/sh', '-c', args];
  const list = jsonList(args);
  if (!list) throw badRequest(`${instruction} ${args}: a JSON array of strings, or a shell command`);
  return list;
}

function listForm(args: string): string[] {
  return args.startsWith('[') ? (jsonList(args) ?? []) : args.split(/\s+/);
}

function jsonList(args: string): string[] | undefined {
  try {
    const value = JSON.parse(args) as unknown;
    return Array.isArray(value) && value.every((x) => typeof x === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `K=V K2="v 2"`, or the legacy `K value with spaces`. */
function pairs(args: string, instruction: string): Array<[string, string]> {
  if (!/^[^\s=]+=/.test(args)) {
    const [key = '', ...value] = args.split(/\s+/);
    if (!value.length) throw badRequest(`${instruction} names must be followed by a value: ${args}`);
    return [[key, value.join(' ')]];
  }
  const out: Array<[string, string]> = [];
  const re = /([^\s=]+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g;
  for (const m of args.matchAll(re)) {
    const raw = m[2] ?? '';
    const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw.startsWith("'") ? raw.slice(1, -1) : raw;
    out.push([m[1]!, value]);
  }
  if (args.replace(re, '').trim()) throw badRequest(`${instruction} ${args}: expected KEY=VALUE pairs`);
  return out;
}

function mergeEnv(env: string[], changes: Array<[string, string]>): string[] {
  const keyOf = (e: string): string => e.split('=')[0]!;
  const changed = new Map(changes);
  return [...env.filter((e) => !changed.has(keyOf(e))), ...changes.map(([k, v]) => `${k}=${v}`)];
}

function exposedPort(port: string): string {
  if (!/^\d+(\/(tcp|udp|sctp))?$/.test(port)) throw badRequest(`invalid containerPort: ${port}`);
  return port.includes('/') ? port : `${port}/tcp`;
}
