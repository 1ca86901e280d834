// SelfSubjectRulesReview (`kubectl auth can-i --list`) and SelfSubjectReview (`kubectl auth whoami`): answers
// about the caller itself, computed and never stored, as the real server's registries for them do.
import { badRequest } from '../api/errors.js';
import { groupVersion } from '../api/resources.js';
import { decodeObjectBody, readBody } from './body.js';
import { sendJson, type ResourceRequest, type ServerContext } from './handlers-context.js';
import type { PolicyRule } from './rbac.js';

const nonEmpty = (list: string[] | undefined) => (list && list.length > 0 ? list : undefined);

/** a PolicyRule split as the RBAC authorizer's RulesFor splits it: resource part and non-resource part */
function splitRule(rule: PolicyRule): { resource?: Record<string, string[]>; nonResource?: Record<string, string[]> } {
  const out: { resource?: Record<string, string[]>; nonResource?: Record<string, string[]> } = {};
  if (nonEmpty(rule.resources)) {
    out.resource = { verbs: rule.verbs };
    if (nonEmpty(rule.apiGroups)) out.resource.apiGroups = rule.apiGroups!;
    out.resource.resources = rule.resources!;
    if (nonEmpty(rule.resourceNames)) out.resource.resourceNames = rule.resourceNames!;
  }
  if (nonEmpty(rule.nonResourceURLs)) out.nonResource = { verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs! };
  return out;
}

export async function handleSelfSubjectRulesReview(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const body = decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  const namespace = body.spec?.namespace;
  if (typeof namespace !== 'string' || namespace === '') throw badRequest('no namespace on request');
  const parts = ctx.authorizer.rulesFor(r.user, namespace).map(splitRule);
  sendJson(r.res, 201, {
    kind: r.route.rt.kind,
    apiVersion: groupVersion(r.route.rt),
    metadata: { creationTimestamp: null },
    spec: {},
    status: {
      resourceRules: parts.flatMap((p) => (p.resource ? [p.resource] : [])),
      nonResourceRules: parts.flatMap((p) => (p.nonResource ? [p.nonResource] : [])),
      incomplete: false,
    },
  });
}

export async function handleSelfSubjectReview(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  // the body says nothing the answer depends on, but it must be a readable object
  decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  const userInfo: Record<string, unknown> = { username: r.user.name };
  if (r.user.uid) userInfo.uid = r.user.uid;
  if (r.user.groups.length > 0) userInfo.groups = [...r.user.groups];
  if (r.user.extra) userInfo.extra = r.user.extra;
  sendJson(r.res, 201, {
    kind: r.route.rt.kind,
    apiVersion: groupVersion(r.route.rt),
    metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
    status: { userInfo },
  });
}
