// get, list, watch, create, update (PUT) and patch on any served resource.
import { randomUUID } from 'node:crypto';
import { ApiError, badRequest, conflict, expired, notFound, qualifiedResource, unsupportedMediaType } from '../api/errors.js';
import { sendInitialEvents, validateListOptions } from '../api/list-options.js';
import { applyCreateDefaults, applyUpdateDefaults, foldStringData } from '../api/defaults.js';
import { applyPatch } from '../api/patch.js';
import { allocateCreateNodePorts, allocateUpdateNodePorts } from '../api/node-ports.js';
import { admitPodServiceAccount } from '../api/service-account-admission.js';
import { groupVersion, resourceByKind } from '../api/resources.js';
import { toTable } from '../api/tables.js';
import { validateCreate, validateUpdate } from '../api/validation.js';
import type { KubeObject, ResourceType, WatchEvent } from '../types.js';
import { decodeBody, decodeObjectBody, mediaType, readBody } from './body.js';
import { queryBool, queryInt, sendJson, TABLE_CONTENT_TYPE, wantsTable, type ResourceRequest, type ServerContext } from './handlers-context.js';
import { removeIfFinalized } from './handlers-delete.js';
import { validateFields } from './field-validation.js';
import { validateWriteOptions } from '../api/write-options.js';
import { serveWatch } from './watch.js';

/** kinds whose PUT creates a missing object (AllowCreateOnUpdate in their registry strategies) */
const CREATE_ON_UPDATE = new Set(['Lease', 'Event', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

function includeObject(r: ResourceRequest): string | undefined {
  return r.url.searchParams.get('includeObject') ?? undefined;
}

function sendObject(r: ResourceRequest, code: number, obj: KubeObject): void {
  if (wantsTable(r.req.headers.accept) && (r.verb === 'get' || r.verb === 'list')) {
    sendJson(r.res, code, toTable(r.route.rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(r)), TABLE_CONTENT_TYPE);
    return;
  }
  sendJson(r.res, code, obj);
}

export function handleGet(ctx: ServerContext, r: ResourceRequest): void {
  const { rt, namespace, name } = r.route;
  sendObject(r, 200, ctx.store.get(rt, namespace, name!));
}

export function handleList(ctx: ServerContext, r: ResourceRequest): void {
  const { rt, namespace } = r.route;
  const q = r.url.searchParams;
  validateListOptions(q, false);
  checkListVersion(ctx, q);
  const labelSelector = q.get('labelSelector') ?? undefined;
  const fieldSelector = q.get('fieldSelector') ?? undefined;
  const result = ctx.store.list(rt, namespace, { labelSelector, fieldSelector, limit: queryInt(q, 'limit'), continue: q.get('continue') || undefined });
  const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) meta.continue = result.continue;
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
  if (wantsTable(r.req.headers.accept)) {
    const listMeta: { resourceVersion?: string; continue?: string } = { resourceVersion: result.resourceVersion };
    if (result.continue) listMeta.continue = result.continue;
    sendJson(r.res, 200, toTable(rt, result.items, listMeta, includeObject(r)), TABLE_CONTENT_TYPE);
    return;
  }
  // the real server's list items carry no apiVersion/kind of their own
  const items = result.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
  sendJson(r.res, 200, { kind: rt.listKind, apiVersion: groupVersion(rt), metadata: meta, items });
}

/**
 * A list at a given resourceVersion: the dev cluster keeps no older states, so `Exact` at any other than the
 * newest is answered as a compacted one (410), and a version from the future as the real server does after
 * waiting for it (504 ResourceVersionTooLarge).
 */
function checkListVersion(ctx: ServerContext, q: URLSearchParams): void {
  const rv = q.get('resourceVersion');
  if (!rv || rv === '0') return;
  const wanted = Number(rv);
  if (!Number.isInteger(wanted) || wanted < 0) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  const current = Number(ctx.store.resourceVersion());
  if (wanted > current) {
    throw new ApiError(504, 'Timeout', `Too large resource version: ${wanted}, current: ${current}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
  }
  if (q.get('resourceVersionMatch') === 'Exact' && wanted !== current) throw expired('The resourceVersion for the provided list is too old.');
}

export function handleWatch(ctx: ServerContext, r: ResourceRequest): void {
  const { rt, namespace, name } = r.route;
  const q = r.url.searchParams;
  validateListOptions(q, true);
  const initialEvents = sendInitialEvents(q) === true;
  // a watch from the future: the real server waits for that version a moment, then answers this
  if (!initialEvents) checkListVersion(ctx, q);
  let fieldSelector = q.get('fieldSelector') ?? undefined;
  if (name !== undefined) fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(',');
  const table = wantsTable(r.req.headers.accept);
  const include = includeObject(r);
  serveWatch(r.req, r.res, {
    store: ctx.store,
    rt,
    namespace,
    watch: {
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector,
      resourceVersion: q.get('resourceVersion') ?? undefined,
      allowWatchBookmarks: queryBool(q, 'allowWatchBookmarks'),
    },
    timeoutSeconds: queryInt(q, 'timeoutSeconds'),
    sendInitialEvents: initialEvents,
    endAfterMs: ctx.faults.endWatchAfterMs,
    contentType: table ? TABLE_CONTENT_TYPE : 'application/json',
    encodeObject: table
      ? (e: WatchEvent) => ({ type: e.type, object: toTable(rt, [e.object], { resourceVersion: e.object.metadata.resourceVersion }, include) })
      : undefined,
    liveStreams: ctx.liveStreams,
  });
}

/** 400 when the body names another kind or group/version than the URL */
function checkTypeMeta(rt: ResourceType, body: Record<string, any>): void {
  const gv = groupVersion(rt);
  if (body.apiVersion !== undefined && body.apiVersion !== gv) {
    throw badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${gv})`);
  }
  if (body.kind !== undefined && body.kind !== rt.kind) {
    throw badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${rt.kind})`);
  }
}

function checkNamespace(rt: ResourceType, urlNamespace: string | undefined, obj: Record<string, any>): void {
  obj.metadata ??= {};
  if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) throw badRequest('metadata must be an object');
  if (!rt.namespaced) return;
  const inBody = obj.metadata.namespace;
  if (inBody && inBody !== urlNamespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  obj.metadata.namespace = urlNamespace;
}

/** NamespaceLifecycle admission: the namespace must exist and not be terminating */
export function admitIntoNamespace(ctx: ServerContext, rt: ResourceType, namespace: string | undefined, name: string | undefined): void {
  if (!rt.namespaced || namespace === undefined) return;
  const nsRt = resourceByKind('Namespace');
  const ns = ctx.store.tryGet(nsRt, undefined, namespace);
  if (!ns) throw notFound(nsRt, namespace);
  if (ns.status?.phase === 'Terminating' || ns.metadata.deletionTimestamp) {
    const subject = name ? `${qualifiedResource(rt)} "${name}"` : qualifiedResource(rt);
    const details: Record<string, string> = { kind: rt.plural };
    if (name) details.name = name;
    if (rt.group) details.group = rt.group;
    throw new ApiError(403, 'Forbidden', `${subject} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, details);
  }
}

const isDryRun = (r: ResourceRequest) => r.url.searchParams.getAll('dryRun').includes('All');

/** defaults, validation and admission for a new object; returns what would be stored */
export function prepareCreate(ctx: ServerContext, rt: ResourceType, namespace: string | undefined, obj: KubeObject): KubeObject {
  admitIntoNamespace(ctx, rt, namespace, obj.metadata.name);
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields'] as const) delete obj.metadata[k];
  if (rt.subresources?.includes('status')) delete obj.status;
  foldStringData(obj);
  applyCreateDefaults(rt, obj, { allocateClusterIp: () => ctx.allocateClusterIp() });
  if (rt.kind === 'Service') allocateCreateNodePorts(obj, ctx.nodePortsInUse());
  if (rt.kind === 'Pod' && namespace !== undefined) admitPodServiceAccount(ctx.store, namespace, obj);
  validateCreate(rt, obj);
  return obj;
}

/**
 * The real storage layer refuses to create an object that carries a resourceVersion (one copied from `kubectl get
 * -o yaml`): a 500 without a reason. A version it cannot parse, or "0", it ignores; a dry run never reaches it.
 */
function refuseVersionOnCreate(version: unknown): void {
  if (typeof version === 'string' && /^[0-9]+$/.test(version) && BigInt(version) !== 0n && BigInt(version) < 2n ** 64n) {
    throw new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
  }
}

export async function handleCreate(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace } = r.route;
  validateWriteOptions('CreateOptions', r.url.searchParams);
  const body = decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  checkTypeMeta(rt, body);
  validateFields(rt, body, r.url.searchParams, r.res, 'CreateOptions');
  checkNamespace(rt, namespace, body);
  const givenVersion = body.metadata.resourceVersion;
  const obj = prepareCreate(ctx, rt, namespace, { ...body, apiVersion: groupVersion(rt), kind: rt.kind } as KubeObject);
  if (isDryRun(r)) {
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    sendJson(r.res, 201, obj);
    return;
  }
  refuseVersionOnCreate(givenVersion);
  sendJson(r.res, 201, ctx.store.create(rt, namespace, obj));
}

/** shared tail of PUT and PATCH: defaults, validation, optimistic-concurrency write */
function writeUpdate(ctx: ServerContext, r: ResourceRequest, current: KubeObject, obj: KubeObject): KubeObject {
  const { rt, namespace, subresource } = r.route;
  if (subresource === 'status') {
    if (isDryRun(r)) return obj;
    return ctx.store.update(rt, namespace, obj, { subresource: 'status' });
  }
  // the stored version is compared before validation, as the real registry's GuaranteedUpdate does: a stale
  // update is a 409 even when its change would also be invalid
  const wanted = obj.metadata.resourceVersion;
  if (wanted && wanted !== current.metadata.resourceVersion) throw conflict(rt, current.metadata.name!);
  foldStringData(obj);
  applyUpdateDefaults(rt, current, obj);
  if (rt.kind === 'Service') allocateUpdateNodePorts(obj, current, ctx.nodePortsInUse(current.metadata.uid));
  validateUpdate(rt, current, obj);
  if (isDryRun(r)) return obj;
  const stored = ctx.store.update(rt, namespace, obj);
  removeIfFinalized(ctx, rt, stored);
  return stored;
}

export async function handleUpdate(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace, name, subresource } = r.route;
  validateWriteOptions('UpdateOptions', r.url.searchParams);
  const body = decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  checkTypeMeta(rt, body);
  validateFields(rt, body, r.url.searchParams, r.res, 'UpdateOptions');
  checkNamespace(rt, namespace, body);
  if (body.metadata.name !== undefined && body.metadata.name !== name) {
    throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
  }
  body.metadata.name = name;
  const obj = { ...body, apiVersion: groupVersion(rt), kind: rt.kind } as KubeObject;
  const current = ctx.store.tryGet(rt, namespace, name!);
  if (!current) {
    if (subresource || !CREATE_ON_UPDATE.has(rt.kind) || obj.metadata.resourceVersion) throw notFound(rt, name!);
    const prepared = prepareCreate(ctx, rt, namespace, obj);
    sendJson(r.res, 201, isDryRun(r) ? prepared : ctx.store.create(rt, namespace, prepared));
    return;
  }
  sendJson(r.res, 200, writeUpdate(ctx, r, current, obj));
}

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml', 'application/strategic-merge-patch+json'];

export async function handlePatch(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace, name } = r.route;
  const contentType = mediaType(r.req.headers['content-type']);
  if (!PATCH_TYPES.includes(contentType)) {
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
  }
  if (contentType === 'application/apply-patch+yaml') {
    // server-side apply needs managed fields, which the dev cluster does not keep
    throw unsupportedMediaType('the dev cluster does not implement server-side apply (application/apply-patch+yaml); use client-side kubectl apply');
  }
  validateWriteOptions('PatchOptions', r.url.searchParams);
  const raw = await readBody(r.req, ctx.maxBodyBytes);
  const patch = decodeBody(raw, 'application/json');
  const current = ctx.store.get(rt, namespace, name!);
  const patched = applyPatch(contentType, current, patch);
  if (!patched || typeof patched !== 'object' || typeof patched.metadata !== 'object' || patched.metadata === null) {
    throw badRequest('the patch produced an object without metadata');
  }
  validateFields(rt, patched, r.url.searchParams, r.res, 'PatchOptions');
  patched.metadata.name = name;
  if (rt.namespaced) patched.metadata.namespace = namespace;
  patched.apiVersion = groupVersion(rt);
  patched.kind = rt.kind;
  sendJson(r.res, 200, writeUpdate(ctx, r, current, patched));
}
