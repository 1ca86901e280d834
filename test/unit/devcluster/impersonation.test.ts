// The Impersonate-* headers as kube-apiserver's impersonation filter reads them.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { ApiError } from '../../../src/devcluster/api/errors.js';
import type { RequestAttributes, UserInfo } from '../../../src/devcluster/types.js';
import { impersonate } from '../../../src/devcluster/server/impersonation.js';

const requestor: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const req = (headers: Record<string, string[]>) => ({ headersDistinct: headers }) as unknown as IncomingMessage;

/** allows every impersonation except what `deny` names, and records what was asked */
function authorizer(deny: (a: RequestAttributes) => boolean = () => false) {
  const asked: RequestAttributes[] = [];
  return {
    asked,
    authorize: (_u: UserInfo, a: RequestAttributes) => (asked.push(a), { allowed: !deny(a) }),
    rulesFor: () => [],
  };
}

test('no Impersonate-* header: the requestor itself', () => {
  assert.equal(impersonate(requestor, req({ accept: ['x'] }), authorizer()), requestor);
});

test('user, groups, uid and extras are each authorized as impersonate, in their API groups', () => {
  const a = authorizer();
  const user = impersonate(
    requestor,
    req({ 'impersonate-user': ['bob'], 'impersonate-group': ['g1', 'g2'], 'impersonate-uid': ['u-1'], 'impersonate-extra-acme.com%2fproject': ['p1', 'p2'] }),
    a,
  );
  assert.deepEqual(user, { name: 'bob', groups: ['g1', 'g2', 'system:authenticated'], uid: 'u-1', extra: { 'acme.com/project': ['p1', 'p2'] } });
  assert.deepEqual(
    a.asked.map((x) => [x.apiGroup, x.resource, x.subresource ?? '', x.name]),
    [
      ['', 'users', '', 'bob'],
      ['', 'groups', '', 'g1'],
      ['', 'groups', '', 'g2'],
      ['authentication.k8s.io', 'userextras', 'acme.com/project', 'p1'],
      ['authentication.k8s.io', 'userextras', 'acme.com/project', 'p2'],
      ['authentication.k8s.io', 'uids', '', 'u-1'],
    ],
  );
});

test('a service account username is checked as serviceaccounts in its namespace and gets its groups', () => {
  const a = authorizer();
  const user = impersonate(requestor, req({ 'impersonate-user': ['system:serviceaccount:ci:builder'] }), a);
  assert.deepEqual(user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated']);
  assert.deepEqual(a.asked[0], { verb: 'impersonate', apiGroup: '', resource: 'serviceaccounts', name: 'builder', namespace: 'ci' });
});

test('a denied impersonation is a 403 naming the verb and the resource', () => {
  const a = authorizer((x) => x.resource === 'userextras');
  assert.throws(
    () => impersonate(requestor, req({ 'impersonate-user': ['bob'], 'impersonate-extra-scopes': ['view'] }), a),
    (e: ApiError) => e.code === 403 && e.message === 'userextras.authentication.k8s.io "view" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
  );
});

test('groups, uid or extras without a user are refused as the real server refuses them (500)', () => {
  assert.throws(
    () => impersonate(requestor, req({ 'impersonate-group': ['g1'] }), authorizer()),
    (e: ApiError) => e.code === 500 && /requested \[\{Group {2}g1 {4}\}\] without impersonating a user/.test(e.message),
  );
});
