// Turns a request path into what it names (resource, namespace, name, subresource) and a request into
// the RBAC verb the real server would check.
import { queryBool } from '../api/query-bool.js';
import { findResource } from '../api/resources.js';
import type { ResourceType } from '../types.js';

export interface ResourceRoute {
  rt: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** the legacy `/api/v1/watch/...` form */
  watchPath: boolean;
}

/**
 * `/api/v1/...` or `/apis/{group}/{version}/...`; undefined when the path names no served resource.
 * Segments are percent-decoded.
 */
export function parseResourcePath(pathname: string): ResourceRoute | undefined {
  const segs = pathname.split('/').filter((s) => s !== '').map(safeDecode);
  if (segs.some((s) => s === undefined)) return undefined;
  const parts = segs as string[];
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (!rest.length) return undefined;
  // namespaces/{ns}/{plural}/... when {plural} is a namespaced resource; otherwise the Namespace object itself
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const rt = findResource(group, version, rest[2]!);
    if (rt && rt.namespaced) {
      if (rest.length > 5) return undefined;
      return route(rt, rest[1], rest[3], rest[4], watchPath);
    }
  }
  const rt = findResource(group, version, rest[0]!);
  if (!rt || rest.length > 3) return undefined;
  if (rt.namespaced) {
    // a namespaced resource across all namespaces: only the collection
    if (rest.length > 1) return undefined;
    return route(rt, undefined, undefined, undefined, watchPath);
  }
  return route(rt, undefined, rest[1], rest[2], watchPath);
}

function route(rt: ResourceType, namespace: string | undefined, name: string | undefined, subresource: string | undefined, watchPath: boolean): ResourceRoute | undefined {
  if (name === '' || subresource === '' || namespace === '') return undefined;
  if (subresource !== undefined && !(rt.subresources ?? []).includes(subresource)) return undefined;
  const r: ResourceRoute = { rt, watchPath };
  if (namespace !== undefined) r.namespace = namespace;
  if (name !== undefined) r.name = name;
  if (subresource !== undefined) r.subresource = subresource;
  return r;
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

const STREAM_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

export function isStreamSubresource(sub: string | undefined): boolean {
  return sub !== undefined && STREAM_SUBRESOURCES.has(sub);
}

/** the verb as the real server's RequestInfoFactory derives it */
export function requestVerb(method: string, r: ResourceRoute, query: URLSearchParams): string | undefined {
  if (isStreamSubresource(r.subresource)) return 'create';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (r.name === undefined) return r.watchPath || queryBool(query, 'watch') ? 'watch' : 'list';
      return r.watchPath ? 'watch' : 'get';
    case 'POST':
      // a collection, or a named object's subresource (serviceaccounts/NAME/token)
      return r.name === undefined || r.subresource !== undefined ? 'create' : undefined;
    case 'PUT':
      return r.name === undefined ? undefined : 'update';
    case 'PATCH':
      return r.name === undefined ? undefined : 'patch';
    case 'DELETE':
      return r.name === undefined ? 'deletecollection' : 'delete';
    default:
      return undefined;
  }
}
