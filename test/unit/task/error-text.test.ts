// berth task tells cluster failures with its own flag and Role file, not the docker shim's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toKubeError } from '../../../src/kube/errors.js';
import { taskErrorText } from '../../../src/task/error-text.js';

const status = (code: number, reason: string, message: string) => ({ code, body: JSON.stringify({ kind: 'Status', code, reason, message }) });

test('a forbidden call names deploy/rbac/task-role.yaml; a missing namespace names -n and --target', () => {
  const forbidden = toKubeError(status(403, 'Forbidden', 'pods is forbidden: User "u" cannot create resource "pods" in API group "" in the namespace "ci"'), {
    verb: 'create',
    resource: 'pods',
    namespace: 'ci',
  });
  assert.match(forbidden.message, /shim-role\.yaml/, "the runtime alone names the shim's Role");
  assert.match(taskErrorText(forbidden), /forbidden: cannot create pods in namespace ci \(grant it in the Role: deploy\/rbac\/task-role\.yaml\)/);
  const missing = toKubeError(status(404, 'NotFound', 'namespaces "ci" not found'), { verb: 'create', resource: 'pods', namespace: 'ci' });
  assert.match(taskErrorText(missing), /namespace ci does not exist \(create it, or pick another with -n \(--namespace\) or --target\)/);
  assert.equal(taskErrorText(new Error('plain')), 'plain');
});

test("a cluster berth cannot reach names the flags berth task picks it with, not the shim's BERTH_CONTEXT", () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
  const unreachable = toKubeError(refused, { verb: 'create', resource: 'pods', namespace: 'ci', server: 'https://127.0.0.1:6443' });
  assert.match(unreachable.message, /BERTH_CONTEXT for the docker shim/, "the runtime alone names the shim's setting");
  assert.equal(
    taskErrorText(unreachable),
    'cannot reach the cluster at https://127.0.0.1:6443: connect ECONNREFUSED 127.0.0.1:6443 (is it running? check KUBECONFIG and the context: --kubeconfig, --context or --target)',
  );
});
