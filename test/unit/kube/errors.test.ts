import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMayHaveLanded, describeKubeError, isUnreachable, madeNothing, parseForbidden, toKubeError } from '../../../src/kube/errors.js';

const status = (code: number, message: string, reason = '') => ({ code, body: JSON.stringify({ kind: 'Status', status: 'Failure', code, reason, message }) });

test('403 names the verb, resource and namespace from the server message and points at the Role', () => {
  const err = status(403, 'pods "fn-1" is forbidden: User "ci" cannot create resource "pods/attach" in API group "" in the namespace "ci"', 'Forbidden');
  assert.equal(
    describeKubeError(err, { verb: 'get', resource: 'pods' }),
    'forbidden: cannot create pods/attach in namespace ci (grant it in the Role: deploy/rbac/shim-role.yaml)',
  );
  // Without a parsable message the action we attempted is named.
  assert.equal(
    describeKubeError({ code: 403, body: '' }, { verb: 'create', resource: 'configmaps', namespace: 'x' }),
    'forbidden: cannot create configmaps in namespace x (grant it in the Role: deploy/rbac/shim-role.yaml)',
  );
  assert.deepEqual(parseForbidden('User "u" cannot create resource "networkpolicies" in API group "networking.k8s.io" in the namespace "n"'), {
    verb: 'create',
    resource: 'networkpolicies.networking.k8s.io',
    namespace: 'n',
  });
});

test('connection refused and 401 read as causes with fixes', () => {
  const refused = Object.assign(new Error('request to https://127.0.0.1:6443/api/v1/namespaces/ci/pods failed, reason: connect ECONNREFUSED 127.0.0.1:6443'), {
    code: 'ECONNREFUSED',
  });
  assert.equal(
    describeKubeError(refused, { verb: 'create', resource: 'pods', server: 'https://127.0.0.1:6443' }),
    'cannot reach the cluster at https://127.0.0.1:6443: connect ECONNREFUSED 127.0.0.1:6443 (is it running? check KUBECONFIG and the context: --context, or BERTH_CONTEXT for the docker shim)',
  );
  const nested = new Error('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' }) });
  assert.match(
    describeKubeError(nested, { verb: 'get', resource: 'pods', server: 'https://h' }),
    /^cannot reach the cluster at https:\/\/h: connect ECONNREFUSED ::1:1/,
  );
  assert.match(
    describeKubeError(status(401, 'Unauthorized'), { verb: 'get', resource: 'pods', server: 'https://h' }),
    /rejected berth's credentials \(401 Unauthorized\): the token/,
  );
});

test('other statuses keep the server message; toKubeError carries code and reason', () => {
  assert.match(
    describeKubeError(status(404, 'namespaces "nope" not found'), { verb: 'create', resource: 'pods', namespace: 'nope' }),
    /namespace nope does not exist/,
  );
  assert.match(
    describeKubeError(status(422, 'Pod "x" is invalid: spec.containers[0].image: Required value'), { verb: 'create', resource: 'pods', namespace: 'ci' }),
    /refused the pod in namespace ci: Pod "x" is invalid/,
  );
  const e = toKubeError(status(500, 'boom', 'InternalError'), { verb: 'create', resource: 'pods' });
  assert.equal(e.code, 500);
  assert.equal(e.reason, 'InternalError');
  assert.match(e.message, /failed to create pods \(500 InternalError\): boom/);
});

test('a failed create made nothing only when the server refused it or was never reached', () => {
  const net = (code: string) => new Error('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
  assert.equal(madeNothing(net('ECONNREFUSED')), true);
  assert.equal(madeNothing(net('ENOTFOUND')), true);
  assert.equal(madeNothing(status(422, 'Pod "x" is invalid')), true);
  assert.equal(madeNothing(status(403, 'forbidden')), true);
  // The request may have been carried out: the answer was lost or came late.
  assert.equal(madeNothing(net('ECONNRESET')), false);
  assert.equal(madeNothing(net('ETIMEDOUT')), false);
  assert.equal(madeNothing(status(504, 'Timeout: request did not complete', 'Timeout')), false);
  assert.equal(madeNothing(new Error('socket hang up')), false);
  const refused = toKubeError(net('ECONNREFUSED'), { verb: 'create', resource: 'pods' });
  assert.equal(createMayHaveLanded(refused), true, 'unmarked, a failed create may have landed');
  refused.createdNothing = true;
  assert.equal(createMayHaveLanded(refused), false);
  assert.equal(createMayHaveLanded(new Error('interrupted')), true);
  assert.equal(isUnreachable(refused), true);
  assert.equal(isUnreachable(toKubeError(status(503, 'unavailable'), { verb: 'create', resource: 'pods' })), false);
});
