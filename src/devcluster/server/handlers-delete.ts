// DELETE of one object and of a collection: graceful pod deletion, namespace termination, finalizers,
// preconditions and the answer the real registry gives for each kind (the object or a Status).
import { ApiError, conflict } from '../api/errors.js';
import { validateDeleteOptions, type RawDeleteOptions } from '../api/write-options.js';
import { groupVersion } from '../api/resources.js';
import type { KubeObject, ResourceType } from '../types.js';
import { decodeObjectBody, readBody } from './body.js';
import { queryBool, queryInt, sendJson, type ResourceRequest, type ServerContext } from './handlers-context.js';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface DeleteOutcome {
  /** the object as last stored (removed, or marked for deletion) */
  object: KubeObject;
  /** gone from the store now (false: graceful or finalizer-held deletion in progress) */
  removed: boolean;
}

/** registries with ReturnDeletedObject: a DELETE answers with the object; the others answer a Status */
const RETURNS_OBJECT = new Set(['Pod', 'Service', 'ServiceAccount', 'Namespace', 'PersistentVolumeClaim', 'Node', 'PodTemplate']);

const UNDELETABLE_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function checkPreconditions(rt: ResourceType, obj: KubeObject, p: DeleteOptions['preconditions']): void {
  const name = obj.metadata.name!;
  if (p?.uid && p.uid !== obj.metadata.uid) {
    throw conflict(rt, name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${obj.metadata.uid}`);
  }
  if (p?.resourceVersion && p.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(rt, name, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`);
  }
}

/** deletes as the real registry would; used by the HTTP handlers and the in-process controllers */
export function deleteObject(ctx: ServerContext, rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): DeleteOutcome {
  const current = ctx.store.get(rt, namespace, name);
  checkPreconditions(rt, current, opts.preconditions);
  if (rt.kind === 'Namespace') return terminateNamespace(ctx, rt, current, opts);
  if (opts.dryRun) return { object: current, removed: true };
  if (opts.propagationPolicy === 'Orphan') ctx.deletion.orphan(current.metadata.uid!);

  if (rt.kind === 'Pod') {
    const requested = opts.gracePeriodSeconds ?? current.spec?.terminationGracePeriodSeconds ?? 30;
    // a negative period is taken as 1 s (the pod strategy's CheckGracefulDelete): only 0 deletes at once
    const grace = requested < 0 ? 1 : requested;
    const phase = current.status?.phase;
    const immediate = !current.spec?.nodeName || phase === 'Succeeded' || phase === 'Failed' || grace === 0;
    if (immediate) return { object: ctx.store.remove(rt, namespace, name), removed: true };
    const pending = current.metadata.deletionGracePeriodSeconds;
    // a second DELETE may only shorten the grace period
    if (current.metadata.deletionTimestamp && pending !== undefined && pending <= grace) return { object: current, removed: false };
    const object = ctx.store.mutate(rt, namespace, name, (p) => {
      p.metadata.deletionTimestamp = rfc3339(Date.now() + grace * 1000);
      p.metadata.deletionGracePeriodSeconds = grace;
    });
    return { object, removed: false };
  }

  if (current.metadata.finalizers?.length) {
    if (current.metadata.deletionTimestamp) return { object: current, removed: false };
    const object = ctx.store.mutate(rt, namespace, name, (o) => {
      o.metadata.deletionTimestamp = rfc3339(Date.now());
      o.metadata.deletionGracePeriodSeconds = 0;
    });
    return { object, removed: false };
  }
  return { object: ctx.store.remove(rt, namespace, name), removed: true };
}

function terminateNamespace(ctx: ServerContext, rt: ResourceType, ns: KubeObject, opts: DeleteOptions): DeleteOutcome {
  const name = ns.metadata.name!;
  if (UNDELETABLE_NAMESPACES.has(name)) {
    throw new ApiError(403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' });
  }
  if (ns.metadata.deletionTimestamp || opts.dryRun) return { object: ns, removed: false };
  // one write, as the real registry does: the namespace controller then empties and removes it
  const object = ctx.store.mutate(rt, undefined, name, (o) => {
    o.metadata.deletionTimestamp = rfc3339(Date.now());
    o.status = { ...(o.status ?? {}), phase: 'Terminating' };
  });
  return { object, removed: false };
}

/** the answer to a successful DELETE */
export function deleteResponse(rt: ResourceType, outcome: DeleteOutcome): unknown {
  if (!outcome.removed || RETURNS_OBJECT.has(rt.kind)) return outcome.object;
  const details: Record<string, string> = { name: outcome.object.metadata.name!, kind: rt.plural, uid: outcome.object.metadata.uid! };
  if (rt.group) details.group = rt.group;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** DeleteOptions from the body (kubectl, client-go) and the query (curl, older clients); the body wins */
async function readDeleteOptions(ctx: ServerContext, r: ResourceRequest): Promise<DeleteOptions> {
  const q = r.url.searchParams;
  const raw: RawDeleteOptions = { dryRun: q.getAll('dryRun') };
  const policy = q.get('propagationPolicy');
  if (policy) raw.propagationPolicy = policy;
  if (q.has('orphanDependents')) raw.orphanDependents = queryBool(q, 'orphanDependents');
  const opts: DeleteOptions = {};
  const grace = queryInt(q, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = grace;
  const bytes = await readBody(r.req, ctx.maxBodyBytes);
  if (bytes.toString('utf8').trim()) {
    const body = decodeObjectBody(bytes, r.req.headers['content-type']);
    if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
    if (typeof body.propagationPolicy === 'string') raw.propagationPolicy = body.propagationPolicy;
    if (typeof body.orphanDependents === 'boolean') raw.orphanDependents = body.orphanDependents;
    if (body.preconditions && typeof body.preconditions === 'object') opts.preconditions = body.preconditions;
    if (Array.isArray(body.dryRun)) raw.dryRun = body.dryRun.map(String);
  }
  validateDeleteOptions(raw);
  if (raw.propagationPolicy) opts.propagationPolicy = raw.propagationPolicy as DeleteOptions['propagationPolicy'];
  if (raw.orphanDependents) opts.propagationPolicy = 'Orphan';
  if (raw.dryRun.length) opts.dryRun = true;
  return opts;
}

export async function handleDelete(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace, name } = r.route;
  const opts = await readDeleteOptions(ctx, r);
  sendJson(r.res, 200, deleteResponse(rt, deleteObject(ctx, rt, namespace, name!, opts)));
}

export async function handleDeleteCollection(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace } = r.route;
  const opts = await readDeleteOptions(ctx, r);
  const q = r.url.searchParams;
  const { items } = ctx.store.list(rt, namespace, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
  const deleted: KubeObject[] = [];
  for (const item of items) {
    try {
      deleted.push(deleteObject(ctx, rt, item.metadata.namespace, item.metadata.name!, { ...opts, preconditions: undefined }).object);
    } catch (e) {
      // gone in the meantime (a controller got there first): not an error for a collection delete
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
  const listItems = deleted.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
  sendJson(r.res, 200, { kind: rt.listKind, apiVersion: groupVersion(rt), metadata: { resourceVersion: ctx.store.resourceVersion() }, items: listItems });
}

/** after a PUT/PATCH: an object marked for deletion whose last finalizer is gone is removed */
export function removeIfFinalized(ctx: ServerContext, rt: ResourceType, obj: KubeObject): void {
  if (rt.kind === 'Pod' || rt.kind === 'Namespace') return;
  if (obj.metadata.deletionTimestamp && !obj.metadata.finalizers?.length) {
    try {
      ctx.store.remove(rt, obj.metadata.namespace, obj.metadata.name!);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
}
