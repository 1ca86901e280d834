/**
 * A `POST /build` as the classic builder's clients send it (the docker CLI without buildx, dockerode, docker-py,
 * every testcontainers): its query read into what berth's builder pod is told (images/build.ts). Pure, so every
 * refusal is a 400 before anything exists in the cluster.
 */
import { posix } from 'node:path';
import { badRequest } from '../http/http.js';
import { tryNormalizeImage } from './image-ref.js';

export interface BuildRequest {
  /** The names the image gets (`-t`), normalized as docker normalizes them. */
  tags: string[];
  /** The Dockerfile's path inside the context. */
  dockerfile: string;
  buildArgs: Record<string, string>;
  labels: Record<string, string>;
  target?: string;
  noCache: boolean;
  quiet: boolean;
  /** `host:ip` entries for the build's /etc/hosts (`--add-host`). */
  extraHosts: string[];
}

/**
 * The other keys have no meaning for a build in a fresh pod and are ignored: rm/forcerm (no intermediate containers
 * are left), pull (the builder's store starts empty: every base is pulled), resources, cache hints, squash.
 */
export function parseBuildRequest(query: URLSearchParams): BuildRequest {
  if (query.get('version') === '2')
    throw badRequest('berth serve builds with the classic builder (API version 1): BuildKit sessions are not served; build without buildx (DOCKER_BUILDKIT=0)');
  if (query.get('remote')) throw badRequest(`a remote build context (${query.get('remote')}) is not supported by berth serve: send the context as a tar body`);
  if (query.get('outputs')) throw badRequest('build outputs are a BuildKit option; berth serve keeps the built image as docker does without them');
  const platform = query.get('platform');
  if (platform && !/^linux(\/amd64)?$/.test(platform)) throw badRequest(`berth serve builds for the cluster's nodes (linux/amd64), not ${platform}`);
  const tags = query.getAll('t').map((t) => {
    const norm = tryNormalizeImage(t);
    if (!norm || norm.includes('@')) throw badRequest(`invalid tag ${JSON.stringify(t)}: invalid reference format (give NAME[:TAG], lower case)`);
    return norm;
  });
  const target = query.get('target') || undefined;
  if (target !== undefined && !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(target)) throw badRequest(`invalid target stage ${JSON.stringify(target)}`);
  return {
    tags,
    dockerfile: dockerfilePath(query.get('dockerfile') || 'Dockerfile'),
    buildArgs: stringMap(query.get('buildargs'), 'buildargs'),
    labels: stringMap(query.get('labels'), 'labels'),
    ...(target ? { target } : {}),
    noCache: isTrue(query.get('nocache')),
    quiet: isTrue(query.get('q')),
    // the docker CLI and dockerd repeat the key, one entry each (`--add-host a:ip --add-host b:ip`)
    extraHosts: query.getAll('extrahosts').flatMap((v) => extraHosts(v)),
  };
}

/** The builder's options (buildah build's, which berth-build in the builder image hands on), context last. */
export function builderArgs(req: BuildRequest, contextDir: string): string[] {
  return [
    '-f',
    posix.join(contextDir, req.dockerfile),
    ...Object.entries(req.buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
    ...Object.entries(req.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
    ...(req.target ? ['--target', req.target] : []),
    ...(req.noCache ? ['--no-cache'] : []),
    ...req.extraHosts.flatMap((h) => ['--add-host', h]),
  ];
}

/** Inside the context: a Dockerfile path that leaves it names nothing the build has. */
function dockerfilePath(value: string): string {
  const path = posix.normalize(value.replace(/^\.\//, ''));
  if (path.startsWith('/') || path === '..' || path.startsWith('../'))
    throw badRequest(`dockerfile ${value} is outside the build context: give its path inside the context`);
  return path;
}

/** A JSON object of strings; a null value (a build arg named without a value and unset in the client's environment) is left out, as dockerd does. */
function stringMap(text: string | null, key: string): Record<string, string> {
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest(`${key} must be a JSON object of strings: ${text}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest(`${key} must be a JSON object of strings: ${text}`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (v === null) continue;
    if (typeof v !== 'string') throw badRequest(`${key}: the value of ${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/** One `extrahosts` value: a JSON list of `host:ip` (the CLI's --add-host), or one such string. */
function extraHosts(text: string): string[] {
  if (!text) return [];
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a bare host:ip
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return list.map((h) => {
    if (typeof h !== 'string' || !/^[^:\s]+:[0-9a-fA-F.:]+$/.test(h)) throw badRequest(`extrahosts: invalid host entry ${JSON.stringify(h)} (give HOST:IP)`);
    return h;
  });
}

function isTrue(v: string | null): boolean {
  return v === '1' || v === 'true' || v === 'True';
}
