// The NetworkPolicy a plan's warm pods share (src/runtime/warm-policy.ts), on a fake cluster: made once before the
// first pod, its expiry moved on before each later pod that would outlive it, deleted with the last pod deleted,
// never while a pod it isolates may still run, and a refusal fails the pod that asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import type { KubeCluster } from '../../../src/kube/cluster.js';
import { LABEL_RUN } from '../../../src/runtime/plan.js';
import { ANNOTATION_EXPIRES_AT } from '../../../src/runtime/pod-rules.js';
import { LABEL_WARM_POLICY, WarmPolicies } from '../../../src/runtime/warm-policy.js';

interface Recorded {
  calls: string[];
  policies: Map<string, V1NetworkPolicy>;
}

function fakeKube(rec: Recorded, refuse: { create?: boolean; annotate?: boolean } = {}): KubeCluster {
  return {
    namespace: 'ci',
    async createNetworkPolicy(np: V1NetworkPolicy) {
      rec.calls.push(`create ${np.metadata?.name}`);
      if (refuse.create) throw new Error('forbidden: cannot create networkpolicies');
      rec.policies.set(np.metadata?.name as string, structuredClone(np));
      return np;
    },
    async annotateNetworkPolicy(name: string, annotations: Record<string, string>) {
      rec.calls.push(`annotate ${name} ${annotations[ANNOTATION_EXPIRES_AT]}`);
      if (refuse.annotate) throw new Error('forbidden: cannot patch networkpolicies');
      const np = rec.policies.get(name) as V1NetworkPolicy;
      np.metadata = { ...np.metadata, annotations: { ...np.metadata?.annotations, ...annotations } };
    },
    async deleteQuietly(kind: string, name: string) {
      rec.calls.push(`delete ${kind}/${name}`);
      rec.policies.delete(name);
    },
  } as unknown as KubeCluster;
}

const PER_POD: V1NetworkPolicy = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: {
    name: 'krm-echo-0123abcd-deny',
    labels: { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/owner': 'agent', [LABEL_RUN]: '0123abcd' },
    annotations: { [ANNOTATION_EXPIRES_AT]: '2026-11-29T01:00:00Z' },
  },
  spec: { podSelector: { matchLabels: { [LABEL_RUN]: '0123abcd' } }, policyTypes: ['Ingress', 'Egress'] },
};
const KEY = 'ab'.repeat(32);
const at = (iso: string) => new Date(iso);

test('the first pod of a plan makes a deny-all policy that selects the warm-policy label, not one run; later pods share it', async () => {
  const rec: Recorded = { calls: [], policies: new Map() };
  const kube = fakeKube(rec);
  const policies = new WarmPolicies();
  const [a, b] = await Promise.all([
    policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z')),
    policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z')),
  ]);
  assert.equal(rec.calls.length, 1, 'one policy for both pods');
  assert.deepEqual(a.podLabels, b.podLabels);
  const [np] = [...rec.policies.values()];
  assert.deepEqual(np.spec?.podSelector, { matchLabels: a.podLabels });
  assert.deepEqual(np.spec?.policyTypes, ['Ingress', 'Egress']);
  assert.equal(np.spec?.ingress, undefined);
  assert.equal(np.spec?.egress, undefined);
  assert.equal(np.metadata?.labels?.[LABEL_RUN], undefined, 'no run owns the shared policy');
  assert.equal(np.metadata?.labels?.[LABEL_WARM_POLICY], a.podLabels[LABEL_WARM_POLICY]);
  assert.equal(np.metadata?.labels?.['app.kubernetes.io/managed-by'], 'berth', 'berth gc finds it');
  assert.match(np.metadata?.name ?? '', /^berth-warm-abababababab-[0-9a-f]{8}$/);
  assert.notEqual(np.metadata?.name, PER_POD.metadata?.name);
  assert.equal(PER_POD.spec?.podSelector?.matchLabels?.[LABEL_RUN], '0123abcd', "the plan's own policy is left as it was");
});

test('a pod that would outlive the policy moves its expiry on first; one that would not asks nothing', async () => {
  const rec: Recorded = { calls: [], policies: new Map() };
  const kube = fakeKube(rec);
  const policies = new WarmPolicies();
  await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  await Promise.all([policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:05:00Z')), policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:02:00Z'))]);
  const name = [...rec.policies.keys()][0];
  assert.deepEqual(rec.calls.slice(1), [`annotate ${name} 2026-11-29T01:05:00Z`], 'the latest expiry, and never one moved back');
  assert.equal(rec.policies.get(name)?.metadata?.annotations?.[ANNOTATION_EXPIRES_AT], '2026-11-29T01:05:00Z');
});

test('the policy is deleted with the last pod deleted, and a new one is made for the next pod', async () => {
  const rec: Recorded = { calls: [], policies: new Map() };
  const kube = fakeKube(rec);
  const policies = new WarmPolicies();
  const a = await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  const b = await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  const first = [...rec.policies.keys()][0];
  a.release(true);
  a.release(true);
  await policies.settled();
  assert.ok(rec.policies.has(first), 'deleted while a pod it isolates is still there (or a release counted twice)');
  b.release(true);
  await policies.settled();
  assert.equal(rec.policies.size, 0);
  const c = await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:10:00Z'));
  assert.equal(rec.policies.size, 1);
  assert.notDeepEqual(c.podLabels, a.podLabels, 'a new policy, with a label of its own');
});

test('a pod whose deletion failed keeps the policy: it is left to its expiry and berth gc, never deleted under the pod', async () => {
  const rec: Recorded = { calls: [], policies: new Map() };
  const kube = fakeKube(rec);
  const policies = new WarmPolicies();
  const a = await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  const b = await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:00:00Z'));
  a.release(false);
  b.release(true);
  await policies.settled();
  assert.equal(rec.policies.size, 1);
  assert.ok(!rec.calls.some((c) => c.startsWith('delete')));
  await policies.hold(KEY, kube, PER_POD, at('2026-11-29T01:10:00Z'));
  assert.equal(rec.policies.size, 2, 'the next pod gets a policy of its own');
});

test('a refused create or renewal fails the pod that asked, and the next pod starts afresh', async () => {
  const rec: Recorded = { calls: [], policies: new Map() };
  const policies = new WarmPolicies();
  await assert.rejects(policies.hold(KEY, fakeKube(rec, { create: true }), PER_POD, at('2026-11-29T01:00:00Z')), /cannot create networkpolicies/);
  const ok = fakeKube(rec);
  const a = await policies.hold(KEY, ok, PER_POD, at('2026-11-29T01:00:00Z'));
  const refusing = new WarmPolicies();
  const rec2: Recorded = { calls: [], policies: new Map() };
  const kube2 = fakeKube(rec2);
  await refusing.hold(KEY, kube2, PER_POD, at('2026-11-29T01:00:00Z'));
  const denied = fakeKube(rec2, { annotate: true });
  // the renewal goes through the kube the policy was made with; make that one refuse
  Object.assign(kube2, { annotateNetworkPolicy: denied.annotateNetworkPolicy });
  await assert.rejects(refusing.hold(KEY, kube2, PER_POD, at('2026-11-29T02:00:00Z')), /cannot patch networkpolicies/);
  Object.assign(kube2, { annotateNetworkPolicy: fakeKube(rec2).annotateNetworkPolicy });
  const fresh = await refusing.hold(KEY, kube2, PER_POD, at('2026-11-29T02:00:00Z'));
  assert.equal(rec2.policies.size, 2, 'a policy whose expiry could not be moved is not trusted for a later pod');
  assert.ok(fresh.podLabels[LABEL_WARM_POLICY]);
  a.release(true);
  await policies.settled();
});
