// Requests answered without storing anything: SelfSubjectAccessReview (asked of the same authorizer
// every request goes through) and berth's fault switches for reliability tests.
import { ApiError, badRequest, invalid, methodNotAllowed } from '../api/errors.js';
import type { Faults, RequestAttributes, UserInfo } from '../types.js';
import { decodeObjectBody, readBody } from './body.js';
import { sendJson, type ResourceRequest, type ServerContext } from './handlers-context.js';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const FAULTS_PATH = '/berth-dev/v1/faults';
const MASTERS_GROUP = 'system:masters';

export async function handleSelfSubjectAccessReview(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const rt = r.route.rt;
  const body = decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  const spec = (body.spec ?? {}) as Record<string, any>;
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if ((ra && nra) || (!ra && !nra)) {
    throw invalid(rt, '', [
      { field: 'spec.resourceAttributes', type: 'FieldValueInvalid', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' },
    ]);
  }
  let attrs: RequestAttributes;
  if (ra) {
    attrs = { verb: String(ra.verb ?? ''), apiGroup: String(ra.group ?? ''), resource: String(ra.resource ?? '') };
    if (ra.subresource) attrs.subresource = String(ra.subresource);
    if (ra.namespace) attrs.namespace = String(ra.namespace);
    if (ra.name) attrs.name = String(ra.name);
  } else {
    attrs = { verb: String(nra.verb ?? ''), apiGroup: '', resource: '', nonResourcePath: String(nra.path ?? '') };
  }
  const decision = ctx.authorizer.authorize(r.user, attrs);
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  sendJson(r.res, 201, {
    kind: rt.kind,
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { ...(body.metadata ?? {}), creationTimestamp: null },
    spec,
    status,
  });
}

const FRACTIONS: (keyof Faults)[] = ['dropStreams', 'error500'];
const DURATIONS: (keyof Faults)[] = ['endWatchAfterMs', 'delayPodStartMs'];
const COUNTS: (keyof Faults)[] = ['failPortForwards', 'containerLogMaxBytes', 'containerLogCheckMs'];

/** GET/PUT /berth-dev/v1/faults, for system:masters only; PUT changes the shared Faults in place */
export async function handleFaults(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, user: UserInfo): Promise<void> {
  if (!user.groups.includes(MASTERS_GROUP)) {
    const verb = req.method === 'GET' ? 'get' : 'update';
    throw new ApiError(403, 'Forbidden', `forbidden: User "${user.name}" cannot ${verb} path "${FAULTS_PATH}"`, {});
  }
  if (req.method === 'PUT') {
    const body = decodeObjectBody(await readBody(req, ctx.maxBodyBytes), req.headers['content-type']);
    const next: Partial<Faults> = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'kind' || k === 'apiVersion') continue;
      const key = k as keyof Faults;
      if (!FRACTIONS.includes(key) && !DURATIONS.includes(key) && !COUNTS.includes(key)) {
        throw badRequest(`unknown fault ${JSON.stringify(k)}; known: ${[...FRACTIONS, ...DURATIONS, ...COUNTS].join(', ')}`);
      }
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (FRACTIONS.includes(key) && v > 1) || (COUNTS.includes(key) && !Number.isInteger(v))) {
        throw badRequest(`fault ${k} must be ${FRACTIONS.includes(key) ? 'a number between 0 and 1' : COUNTS.includes(key) ? 'a whole number >= 0' : 'a number >= 0'}`);
      }
      next[key] = v;
    }
    Object.assign(ctx.faults, next);
  } else if (req.method !== 'GET') {
    throw methodNotAllowed(`${req.method} is not supported on ${FAULTS_PATH}`);
  }
  sendJson(res, 200, { ...ctx.faults });
}
