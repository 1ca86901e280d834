// Discovery documents: /version, legacy discovery (/api, /apis, /api/v1, /apis/{g}, /apis/{g}/{v}), the
// aggregated discovery (apidiscovery.k8s.io v2, v2beta1) that kubectl >= 1.26 asks for first on /api and /apis,
// and /openapi/v3: PATCH operations that tell kubectl the server validates fields itself (without them `kubectl
// apply` and `kubectl create -f` fail with "failed to download openapi" unless given --validate=false), and the
// component schemas `kubectl explain` reads.
import { createHash } from 'node:crypto';
import { RESOURCES, apiGroups } from '../api/resources.js';
import type { ResourceType } from '../types.js';
import { componentSchemas } from './openapi-schemas.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-berth',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const JSON_TYPE = 'application/json';
const DISCOVERY_GROUP = 'apidiscovery.k8s.io';
const DISCOVERY_KIND = 'APIGroupDiscoveryList';

/** The kind each subresource answers with, as the real server lists it, and its verbs. */
const SUBRESOURCES: Record<string, { kind?: string; group?: string; version?: string; verbs: string[] }> = {
  status: { verbs: ['get', 'patch', 'update'] },
  log: { verbs: ['get'] },
  exec: { kind: 'PodExecOptions', verbs: ['create', 'get'] },
  attach: { kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  portforward: { kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  token: { kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] },
};

export function discoveryResponse(path: string, accept: string | undefined): { contentType: string; body: unknown } | undefined {
  const clean = normalize(path);
  if (clean === '/version') return { contentType: JSON_TYPE, body: { ...SERVER_VERSION } };
  if (clean === '/api' || clean === '/apis') {
    const core = clean === '/api';
    const aggregated = aggregatedVersionWanted(accept);
    if (aggregated) {
      return {
        contentType: `${JSON_TYPE};g=${DISCOVERY_GROUP};v=${aggregated};as=${DISCOVERY_KIND}`,
        body: aggregatedList(aggregated, core),
      };
    }
    return { contentType: JSON_TYPE, body: core ? apiVersions() : apiGroupList() };
  }
  if (clean === '/openapi/v3') return { contentType: JSON_TYPE, body: openApiV3Root() };
  if (clean.startsWith('/openapi/v3/')) {
    const doc = openApiV3GroupVersion(clean.slice('/openapi/v3/'.length));
    return doc ? { contentType: JSON_TYPE, body: doc } : undefined;
  }
  const parts = clean.split('/').filter(Boolean);
  if (parts[0] === 'api' && parts.length === 2) return resourceListResponse('', parts[1]!);
  if (parts[0] === 'apis' && parts.length === 2) {
    const group = apiGroups().find((g) => g.group === parts[1] && g.group !== '');
    return group ? { contentType: JSON_TYPE, body: { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group) } } : undefined;
  }
  if (parts[0] === 'apis' && parts.length === 3 && parts[1] !== '') return resourceListResponse(parts[1]!, parts[2]!);
  return undefined;
}

function normalize(path: string): string {
  const withoutQuery = path.split('?')[0]!;
  return withoutQuery.length > 1 ? withoutQuery.replace(/\/+$/, '') : withoutQuery;
}

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type, ...rawParams] = part.split(';').map((s) => s.trim());
      const params = new Map<string, string>();
      for (const p of rawParams) {
        const eq = p.indexOf('=');
        if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
      }
      const q = params.has('q') ? Number(params.get('q')) : 1;
      return { type: (type ?? '').toLowerCase(), params, q: Number.isNaN(q) ? 0 : q };
    })
    .filter((m) => m.type !== '' && m.q > 0);
}

/**
 * Which aggregated discovery version the Accept header prefers, or undefined for the legacy documents.
 * Media ranges are taken in the client's order (stable by q), as the apiserver's negotiation does.
 */
function aggregatedVersionWanted(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  const ranges = parseAccept(accept).sort((a, b) => b.q - a.q);
  for (const r of ranges) {
    const as = r.params.get('as');
    if (r.type === JSON_TYPE && as === DISCOVERY_KIND && r.params.get('g') === DISCOVERY_GROUP) {
      const v = r.params.get('v');
      if (v === 'v2' || v === 'v2beta1') return v;
      continue;
    }
    if (as === undefined && (r.type === JSON_TYPE || r.type === 'application/*' || r.type === '*/*')) return undefined;
  }
  return undefined;
}

/** discovery.StorageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind") */
function storageVersionHash(rt: ResourceType): string {
  return createHash('sha256').update(`${rt.group}/${rt.version}/${rt.kind}`).digest().subarray(0, 8).toString('base64');
}

function resourcesOf(group: string, version: string): ResourceType[] {
  return RESOURCES.filter((r) => r.group === group && r.version === version);
}

function resourceListResponse(group: string, version: string): { contentType: string; body: unknown } | undefined {
  const resources = resourcesOf(group, version);
  if (resources.length === 0) return undefined;
  const entries: Record<string, unknown>[] = [];
  for (const rt of resources) {
    const entry: Record<string, unknown> = { name: rt.plural, singularName: rt.singular, namespaced: rt.namespaced, kind: rt.kind, verbs: [...rt.verbs] };
    if (rt.shortNames?.length) entry.shortNames = [...rt.shortNames];
    if (rt.categories?.length) entry.categories = [...rt.categories];
    entry.storageVersionHash = storageVersionHash(rt);
    entries.push(entry);
    for (const sub of rt.subresources ?? []) {
      const info = SUBRESOURCES[sub] ?? { verbs: ['get'] };
      const entry: Record<string, unknown> = { name: `${rt.plural}/${sub}`, singularName: '', namespaced: rt.namespaced };
      // a subresource of another group's kind names that group and version (serviceaccounts/token: authentication.k8s.io/v1)
      if (info.group !== undefined) Object.assign(entry, { group: info.group, version: info.version });
      entries.push({ ...entry, kind: info.kind ?? rt.kind, verbs: [...info.verbs] });
    }
  }
  entries.sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const groupVersion = group ? `${group}/${version}` : version;
  // the core list is served without apiVersion, the group lists with it, as kube-apiserver does
  const body = group ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: entries } : { kind: 'APIResourceList', groupVersion, resources: entries };
  return { contentType: JSON_TYPE, body };
}

function apiVersions(): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }] };
}

function apiGroup(g: { group: string; versions: string[] }): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.group}/${v}`, version: v }));
  return { name: g.group, versions, preferredVersion: versions[0] };
}

function apiGroupList(): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: apiGroups().filter((g) => g.group !== '').map(apiGroup) };
}

function aggregatedResource(rt: ResourceType): Record<string, unknown> {
  const responseKind = { group: rt.group, version: rt.version, kind: rt.kind };
  const entry: Record<string, unknown> = {
    resource: rt.plural,
    responseKind,
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: [...rt.verbs],
  };
  if (rt.shortNames?.length) entry.shortNames = [...rt.shortNames];
  if (rt.categories?.length) entry.categories = [...rt.categories];
  if (rt.subresources?.length) {
    entry.subresources = rt.subresources.map((sub) => {
      const info = SUBRESOURCES[sub] ?? { verbs: ['get'] };
      const kind = info.group !== undefined ? { group: info.group, version: info.version, kind: info.kind } : { ...responseKind, kind: info.kind ?? rt.kind };
      return { subresource: sub, responseKind: kind, verbs: [...info.verbs] };
    });
  }
  return entry;
}

function aggregatedList(version: 'v2' | 'v2beta1', core: boolean): unknown {
  const groups = apiGroups().filter((g) => (g.group === '') === core);
  const items = groups.map((g) => ({
    metadata: g.group ? { name: g.group, creationTimestamp: null } : { creationTimestamp: null },
    versions: g.versions.map((v) => ({
      version: v,
      resources: resourcesOf(g.group, v)
        .map(aggregatedResource)
        .sort((a, b) => String(a.resource).localeCompare(String(b.resource))),
      freshness: 'Current',
    })),
  }));
  return { kind: DISCOVERY_KIND, apiVersion: `${DISCOVERY_GROUP}/${version}`, metadata: {}, items };
}

// ---- OpenAPI v3, only what kubectl's field-validation check reads ----

/** "api/v1" or "apis/{group}/{version}", the keys of the OpenAPI v3 root */
const openApiPath = (group: string, version: string) => (group ? `apis/${group}/${version}` : `api/${version}`);

function openApiV3Root(): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of apiGroups()) {
    for (const v of g.versions) {
      const key = openApiPath(g.group, v);
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${specHash(g.group, v)}` };
    }
  }
  return { paths };
}

function specHash(group: string, version: string): string {
  return createHash('sha256').update(JSON.stringify(resourcesOf(group, version))).digest('hex').slice(0, 16).toUpperCase();
}

/**
 * Every PATCH operation carries its x-kubernetes-group-version-kind and the fieldValidation parameter (client-go
 * supportsQueryParamV3). No request body is declared, so kubectl apply computes its strategic merge patch from
 * its compiled-in types, as it does for a server without OpenAPI.
 */
function openApiV3GroupVersion(key: string): unknown {
  const g = apiGroups().flatMap((x) => x.versions.map((v) => ({ group: x.group, version: v }))).find((x) => openApiPath(x.group, x.version) === key);
  if (!g) return undefined;
  const query = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  const paths: Record<string, unknown> = {};
  for (const rt of resourcesOf(g.group, g.version)) {
    if (!rt.verbs.includes('patch')) continue;
    const prefix = `/${key}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}/{name}`;
    paths[prefix] = {
      patch: {
        operationId: `patch${rt.namespaced ? 'Namespaced' : ''}${rt.kind}`,
        parameters: [query('dryRun'), query('fieldManager'), query('fieldValidation'), { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } }],
        responses: { '200': { description: 'OK' } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths,
    components: { schemas: componentSchemas(resourcesOf(g.group, g.version), g.group, g.version) },
  };
}
