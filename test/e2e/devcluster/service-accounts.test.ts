// Pods get an identity as in a real cluster: ServiceAccounts, `kubectl create token` (the TokenRequest API),
// requests authenticated as system:serviceaccount:NS:NAME and authorized by RBAC, tokens refused once their
// ServiceAccount or bound pod is gone, and the projected kube-api-access volume with which a pod calls the
// API server at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { join } from 'node:path';
import { BUSYBOX, NODE_IMAGE, deleteNamespace, freshNamespace, kubeConfig, kubectl, kubectlOk, repoRoot, waitForPod } from '../harness/cluster.js';

const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const rbacFor = (ns: string) => `apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: ${ns}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: ${ns}}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-reads-pods, namespace: ${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {kind: ServiceAccount, name: reader, namespace: ${ns}}
`;

/** lists the pods of its namespace with its mounted token and CA, as an in-cluster client does, and prints what it got */
const IN_CLUSTER_CLIENT = `
const fs = require('fs'), https = require('https');
const dir = '${TOKEN_DIR}';
const token = fs.readFileSync(dir + '/token', 'utf8');
const ns = fs.readFileSync(dir + '/namespace', 'utf8');
const req = https.request({
  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
  path: '/api/v1/namespaces/' + ns + '/pods', ca: fs.readFileSync(dir + '/ca.crt'),
  headers: { Authorization: 'Bearer ' + token },
}, (res) => {
  let body = '';
  res.on('data', (d) => (body += d)).on('end', () => {
    const o = JSON.parse(body);
    console.log(JSON.stringify({ code: res.statusCode, ns, names: (o.items || []).map((p) => p.metadata.name), message: o.message, port: process.env.KUBERNETES_PORT }));
  });
});
req.on('error', (e) => { console.log(JSON.stringify({ error: e.message })); process.exitCode = 3; });
req.end();
`;

function claimsOf(token: string): any {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

const finished = (p: k8s.V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

describe('service accounts: tokens, authentication, the projected token volume', () => {
  let ns: string;
  const kc = kubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);

  before(async () => {
    ns = await freshNamespace('sa');
    await kubectlOk(['apply', '-f', '-'], { input: rbacFor(ns) });
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('every namespace has the default ServiceAccount and the kube-root-ca.crt ConfigMap', async () => {
    const sa = await core.readNamespacedServiceAccount({ name: 'default', namespace: ns });
    assert.ok(sa.metadata?.uid);
    const cm = await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: ns });
    assert.match(cm.data?.['ca.crt'] ?? '', /BEGIN CERTIFICATE/);
    for (const builtin of ['default', 'kube-system', 'kube-public']) {
      await core.readNamespacedServiceAccount({ name: 'default', namespace: builtin });
    }
  });

  test('kubectl create token: a JWT whose requests are authorized exactly as the RoleBinding says', async () => {
    const token = (await kubectlOk(['create', 'token', 'reader', '-n', ns])).trim();
    const sa = await core.readNamespacedServiceAccount({ name: 'reader', namespace: ns });
    const claims = claimsOf(token);
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    assert.equal(claims.sub, `system:serviceaccount:${ns}:reader`);
    assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
    assert.equal(claims.exp - claims.iat, 3600);
    assert.deepEqual(claims['kubernetes.io'], { namespace: ns, serviceaccount: { name: 'reader', uid: sa.metadata!.uid } });
    assert.equal(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).alg, 'RS256');

    const allowed = await kubectl(['--token', token, 'get', 'pods', '-n', ns]);
    assert.equal(allowed.code, 0, allowed.stderr);
    const denied = await kubectl(['--token', token, 'get', 'secrets', '-n', ns]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, new RegExp(`secrets is forbidden: User "system:serviceaccount:${ns}:reader" cannot list resource "secrets" in API group "" in the namespace "${ns}"`));
    const elsewhere = await kubectl(['--token', token, 'get', 'pods', '-n', 'default']);
    assert.match(elsewhere.stderr, /pods is forbidden: User "system:serviceaccount:.*:reader" cannot list resource "pods" in API group "" in the namespace "default"/);

    const whoami = JSON.parse(await kubectlOk(['--token', token, 'auth', 'whoami', '-o', 'json']));
    assert.deepEqual(whoami.status.userInfo.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
    assert.equal(whoami.status.userInfo.uid, sa.metadata!.uid);
    assert.match(whoami.status.userInfo.extra['authentication.kubernetes.io/credential-id'][0], /^JTI=/);
  });

  test('the server enforces the 10-minute minimum and serves audiences and durations as asked', async () => {
    const short = await kubectl(['create', 'token', 'reader', '-n', ns, '--duration', '5m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/);
    // the edit ClusterRole lets a namespace's editors mint tokens of its ServiceAccounts, no one else's
    await kubectlOk(['create', 'rolebinding', 'shim-edits', '-n', ns, '--clusterrole', 'edit', '--user', 'shim']);
    assert.equal((await kubectl(['create', 'token', 'reader', '-n', ns], { user: 'shim' })).code, 0);
    const foreign = await kubectl(['create', 'token', 'default', '-n', 'default'], { user: 'shim' });
    assert.match(foreign.stderr, /serviceaccounts "default" is forbidden: User "shim" cannot create resource "serviceaccounts\/token" in API group "" in the namespace "default"/);
    const missing = await kubectl(['create', 'token', 'nobody', '-n', ns]);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
    const other = (await kubectlOk(['create', 'token', 'reader', '-n', ns, '--audience', 'vault', '--duration', '20m'])).trim();
    const claims = claimsOf(other);
    assert.deepEqual(claims.aud, ['vault']);
    assert.equal(claims.exp - claims.iat, 1200);
    // a token for another audience is no credential for the API server
    const r = await kubectl(['--token', other, 'get', 'pods', '-n', ns]);
    assert.match(r.stderr, /Unauthorized/);
  });

  test('a token of a deleted ServiceAccount is refused (401), also once one of the same name is created again', async () => {
    await kubectlOk(['create', 'serviceaccount', 'short-lived', '-n', ns]);
    await kubectlOk(['create', 'rolebinding', 'short-lived', '-n', ns, '--role', 'pod-reader', `--serviceaccount=${ns}:short-lived`]);
    const token = (await kubectlOk(['create', 'token', 'short-lived', '-n', ns])).trim();
    assert.equal((await kubectl(['--token', token, 'get', 'pods', '-n', ns])).code, 0);
    await kubectlOk(['delete', 'serviceaccount', 'short-lived', '-n', ns]);
    const gone = await kubectl(['--token', token, 'get', 'pods', '-n', ns]);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /You must be logged in to the server \(Unauthorized\)/);
    await kubectlOk(['create', 'serviceaccount', 'short-lived', '-n', ns]);
    const again = await kubectl(['--token', token, 'get', 'pods', '-n', ns]);
    assert.match(again.stderr, /Unauthorized/, 'the new ServiceAccount has another uid');
  });

  test('a kubernetes.io/service-account-token Secret gets a long-lived token, deleted with its ServiceAccount', async () => {
    await kubectlOk(['create', 'serviceaccount', 'ci-bot', '-n', ns]);
    await kubectlOk(['create', 'rolebinding', 'ci-bot', '-n', ns, '--role', 'pod-reader', `--serviceaccount=${ns}:ci-bot`]);
    const secret = (name: string, sa: string) => `apiVersion: v1
kind: Secret
metadata: {name: ${name}, namespace: ${ns}, annotations: {kubernetes.io/service-account.name: ${sa}}}
type: kubernetes.io/service-account-token
`;
    await kubectlOk(['apply', '-f', '-'], { input: secret('ci-bot-token', 'ci-bot') });
    let filled: k8s.V1Secret | undefined;
    for (let i = 0; i < 50 && !filled?.data?.token; i++) {
      filled = await core.readNamespacedSecret({ name: 'ci-bot-token', namespace: ns });
      if (!filled.data?.token) await new Promise((r) => setTimeout(r, 100));
    }
    const sa = await core.readNamespacedServiceAccount({ name: 'ci-bot', namespace: ns });
    assert.equal(filled!.metadata!.annotations!['kubernetes.io/service-account.uid'], sa.metadata!.uid);
    assert.equal(Buffer.from(filled!.data!.namespace!, 'base64').toString(), ns);
    assert.match(Buffer.from(filled!.data!['ca.crt']!, 'base64').toString(), /BEGIN CERTIFICATE/);
    const token = Buffer.from(filled!.data!.token!, 'base64').toString();
    assert.equal(claimsOf(token).iss, 'kubernetes/serviceaccount');
    assert.equal((await kubectl(['--token', token, 'get', 'pods', '-n', ns])).code, 0);
    assert.match((await kubectl(['--token', token, 'get', 'secrets', '-n', ns])).stderr, new RegExp(`User "system:serviceaccount:${ns}:ci-bot" cannot list resource "secrets"`));

    const unnamed = await kubectl(['create', '-f', '-'], { input: secret('bad', "''") });
    assert.match(unnamed.stderr, /metadata\.annotations\[kubernetes\.io\/service-account\.name\]: Required value/);

    await kubectlOk(['delete', 'serviceaccount', 'ci-bot', '-n', ns]);
    assert.match((await kubectl(['--token', token, 'get', 'pods', '-n', ns])).stderr, /Unauthorized/);
    let gone = false;
    for (let i = 0; i < 50 && !gone; i++) {
      gone = (await kubectl(['get', 'secret', 'ci-bot-token', '-n', ns])).code !== 0;
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(gone, 'the tokens controller deletes the Secret of a deleted ServiceAccount');
  });

  test('a pod without a ServiceAccount is refused at create, as the admission plugin refuses it', async () => {
    const r = await kubectl(['run', 'orphan', '-n', ns, '--image', BUSYBOX, '--restart', 'Never', '--overrides', JSON.stringify({ spec: { serviceAccountName: 'nope' } }), '--', 'true']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`pods "orphan" is forbidden: error looking up service account ${ns}/nope: serviceaccount "nope" not found`));
  });

  test('a pod calls the API server with its mounted token: allowed with the RoleBinding, 403 without', async () => {
    const pod = (name: string, serviceAccountName: string): k8s.V1Pod => ({
      metadata: { name },
      spec: { serviceAccountName, restartPolicy: 'Never', containers: [{ name: 'client', image: NODE_IMAGE, command: ['node', '-e', IN_CLUSTER_CLIENT] }] },
    });
    const created = await core.createNamespacedPod({ namespace: ns, body: pod('allowed', 'reader') });
    await core.createNamespacedPod({ namespace: ns, body: pod('denied', 'default') });

    // the spec as a real server shows it after the ServiceAccount admission plugin
    const volume = created.spec!.volumes!.find((v) => v.name.startsWith('kube-api-access-'));
    assert.ok(volume, JSON.stringify(created.spec!.volumes));
    assert.match(volume!.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(JSON.parse(JSON.stringify(volume!.projected)), {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    assert.deepEqual(JSON.parse(JSON.stringify(created.spec!.containers[0]!.volumeMounts)), [{ name: volume!.name, readOnly: true, mountPath: TOKEN_DIR }]);
    assert.equal(created.spec!.serviceAccount, 'reader');

    const allowed = await waitForPod(kc, ns, 'allowed', finished, 60_000);
    const out = JSON.parse((await kubectlOk(['logs', 'allowed', '-n', ns])).trim());
    assert.equal(allowed.status?.phase, 'Succeeded', JSON.stringify(out));
    assert.equal(out.code, 200, JSON.stringify(out));
    assert.equal(out.ns, ns);
    assert.ok(out.names.includes('allowed') && out.names.includes('denied'), JSON.stringify(out));
    assert.match(out.port, /^tcp:\/\/[\d.]+:\d+$/);

    await waitForPod(kc, ns, 'denied', finished, 60_000);
    const refused = JSON.parse((await kubectlOk(['logs', 'denied', '-n', ns])).trim());
    assert.equal(refused.code, 403, JSON.stringify(refused));
    assert.equal(refused.message, `pods is forbidden: User "system:serviceaccount:${ns}:default" cannot list resource "pods" in API group "" in the namespace "${ns}"`);
  });

  test('@kubernetes/client-node in a pod finds its in-cluster config (loadFromDefault) and is the ServiceAccount', async () => {
    // berth's own client inside a pod, as in Argo CD's repo-server: the repository's client-node, mounted read-only
    // a step that hangs says which one it was (a full suite once saw this pod run for 60 s without an answer)
    const script = `
      let step = 'loading client-node';
      setTimeout(() => { console.error('stuck ' + step); process.exit(3); }, 40000).unref();
      const k8s = await import('/deps/node_modules/@kubernetes/client-node/dist/index.js');
      const kc = new k8s.KubeConfig();
      kc.loadFromDefault();
      const ns = (await import('node:fs')).readFileSync('${TOKEN_DIR}/namespace', 'utf8');
      step = 'listing pods at ' + kc.getCurrentCluster().server;
      const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: ns });
      step = 'listing secrets';
      let denied = '';
      try { await kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: ns }); } catch (e) { denied = String(e.code ?? e.message); }
      console.log(JSON.stringify({ server: kc.getCurrentCluster().server, pods: pods.items.length, denied }));
    `;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'client-node' },
        spec: {
          serviceAccountName: 'reader',
          restartPolicy: 'Never',
          volumes: [{ name: 'deps', hostPath: { path: join(repoRoot, 'node_modules'), type: 'Directory' } }],
          containers: [{ name: 'c', image: NODE_IMAGE, command: ['node', '--input-type=module', '-e', script], volumeMounts: [{ name: 'deps', mountPath: '/deps/node_modules', readOnly: true }] }],
        },
      },
    });
    const done = await waitForPod(kc, ns, 'client-node', finished, 60_000);
    const logs = await kubectlOk(['logs', 'client-node', '-n', ns]);
    assert.equal(done.status?.phase, 'Succeeded', logs);
    const out = JSON.parse(logs.trim());
    assert.match(out.server, /^https:\/\/[\d.]+:\d+$/);
    assert.ok(out.pods >= 1, logs);
    assert.equal(out.denied, '403', logs);
  });

  test('a token bound to a pod names the pod and stops working when the pod is deleted', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'holder' }, spec: { serviceAccountName: 'reader', containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'] }], terminationGracePeriodSeconds: 0 } },
    });
    const token = (await kubectlOk(['create', 'token', 'reader', '-n', ns, '--bound-object-kind', 'Pod', '--bound-object-name', 'holder'])).trim();
    const holder = await core.readNamespacedPod({ name: 'holder', namespace: ns });
    assert.deepEqual(claimsOf(token)['kubernetes.io'].pod, { name: 'holder', uid: holder.metadata!.uid });
    const whoami = JSON.parse(await kubectlOk(['--token', token, 'auth', 'whoami', '-o', 'json']));
    assert.deepEqual(whoami.status.userInfo.extra['authentication.kubernetes.io/pod-name'], ['holder']);
    const wrongSa = await kubectl(['create', 'token', 'default', '-n', ns, '--bound-object-kind', 'Pod', '--bound-object-name', 'holder']);
    assert.match(wrongSa.stderr, /cannot bind token for serviceaccount "default" to pod running with different serviceaccount name/);
    await kubectlOk(['delete', 'pod', 'holder', '-n', ns, '--grace-period=0', '--force']);
    const r = await kubectl(['--token', token, 'get', 'pods', '-n', ns]);
    assert.match(r.stderr, /Unauthorized/);
  });

  test('automountServiceAccountToken: false on the pod or its ServiceAccount: no volume, no token file', async () => {
    await kubectlOk(['create', 'serviceaccount', 'quiet', '-n', ns]);
    await kubectlOk(['patch', 'serviceaccount', 'quiet', '-n', ns, '-p', '{"automountServiceAccountToken": false}']);
    const script = `ls ${TOKEN_DIR} 2>&1; echo host=$KUBERNETES_SERVICE_HOST`;
    const byPod = await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'no-token' }, spec: { automountServiceAccountToken: false, restartPolicy: 'Never', containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', script] }] } },
    });
    const bySa = await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'quiet' }, spec: { serviceAccountName: 'quiet', restartPolicy: 'Never', containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', script] }] } },
    });
    for (const p of [byPod, bySa]) {
      assert.equal(p.spec!.volumes, undefined, JSON.stringify(p.spec!.volumes));
      assert.equal(p.spec!.containers[0]!.volumeMounts, undefined);
    }
    const seen = await core.readNamespacedPod({ name: 'no-token', namespace: ns });
    assert.equal(seen.spec!.serviceAccountName, 'default');
    assert.equal(seen.spec!.automountServiceAccountToken, false);
    for (const name of ['no-token', 'quiet']) {
      await waitForPod(kc, ns, name, finished, 60_000);
      const logs = await kubectlOk(['logs', name, '-n', ns]);
      assert.match(logs, /No such file or directory/, logs);
      // the kubelet sets the kubernetes Service's variables whatever the token
      assert.match(logs, /host=\d+\.\d+\.\d+\.\d+/, logs);
    }
  });
});
