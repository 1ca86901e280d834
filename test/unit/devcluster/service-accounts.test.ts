// Service account tokens: the JWT itself, the claims the real server writes, the checks it makes before a
// token is a user, the TokenRequest rules, the ServiceAccount admission plugin and the kubelet's variables.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { admitPodServiceAccount, tokenVolumeSource } from '../../../src/devcluster/api/service-account-admission.js';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { kubernetesServiceEnv } from '../../../src/devcluster/node/env.js';
import { materializeVolume, refreshVolumeTokens, tokenRefreshSeconds, type VolumeContext } from '../../../src/devcluster/node/volumes.js';
import { ServiceAccountTokenAuthenticator, UnionAuthenticator, TokenAuthenticator } from '../../../src/devcluster/server/auth.js';
import { decodeProtobufObject } from '../../../src/devcluster/server/body-protobuf.js';
import { issueTokenRequest } from '../../../src/devcluster/server/handlers-token-request.js';
import { signJwt, verifyJwt, keyId } from '../../../src/devcluster/server/jwt.js';
import { ISSUER, ServiceAccountTokens, tokenClaims, validateClaims, type LiveObject, type TokenLookup } from '../../../src/devcluster/server/service-account-tokens.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { scratchDir } from '../../util/scratch.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = 1_800_000_000;
const SA = { name: 'builder', uid: 'sa-uid' };

function lookup(objects: { sa?: LiveObject; pod?: LiveObject; secret?: LiveObject } = { sa: { uid: SA.uid } }): TokenLookup {
  return {
    serviceAccount: (ns, name) => (ns === 'ci' && name === SA.name ? objects.sa : undefined),
    pod: (ns, name) => (ns === 'ci' && name === 'job-1' ? objects.pod : undefined),
    secret: (ns, name) => (ns === 'ci' && name === 'bound' ? objects.secret : undefined),
  };
}

test('jwt: RS256 with the key id, verified only with the same key and algorithm', () => {
  const token = signJwt({ sub: 'x' }, privateKey, keyId(publicKey));
  const [header] = token.split('.');
  assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'RS256', kid: keyId(publicKey) });
  assert.deepEqual(verifyJwt(token, publicKey), { sub: 'x' });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  assert.equal(verifyJwt(token, other), undefined, 'another key');
  const [h, , s] = token.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin' })).toString('base64url')}.${s}`;
  assert.equal(verifyJwt(forged, publicKey), undefined, 'changed claims');
  const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.x`;
  assert.equal(verifyJwt(none, publicKey), undefined, 'alg none');
  assert.equal(verifyJwt('not-a-jwt', publicKey), undefined);
});

test('claims: the standard ones and kubernetes.io, as pkg/serviceaccount writes them', () => {
  const claims = tokenClaims(
    { namespace: 'ci', serviceAccount: SA, pod: { name: 'job-1', uid: 'pod-uid' }, node: { name: 'berth-dev', uid: 'node-uid' } },
    { audiences: [ISSUER], expirationSeconds: 31536000, warnAfterSeconds: 3607, now: NOW, jti: 'j-1' },
  );
  assert.deepEqual(claims, {
    aud: ['https://kubernetes.default.svc.cluster.local'],
    exp: NOW + 31536000,
    iat: NOW,
    iss: 'https://kubernetes.default.svc.cluster.local',
    jti: 'j-1',
    'kubernetes.io': {
      namespace: 'ci',
      serviceaccount: { name: 'builder', uid: 'sa-uid' },
      pod: { name: 'job-1', uid: 'pod-uid' },
      node: { name: 'berth-dev', uid: 'node-uid' },
      warnafter: NOW + 3607,
    },
    nbf: NOW,
    sub: 'system:serviceaccount:ci:builder',
  });
  assert.deepEqual(Object.keys(claims), [...Object.keys(claims)].sort(), 'keys in the order Go writes a map');
});

test('validation: a live ServiceAccount token is the service account user, with its groups, uid and extras', () => {
  const claims = tokenClaims({ namespace: 'ci', serviceAccount: SA, pod: { name: 'job-1', uid: 'pod-uid' }, node: { name: 'berth-dev', uid: 'n' } }, { audiences: [ISSUER], expirationSeconds: 3600, now: NOW, jti: 'j' });
  assert.deepEqual(validateClaims(claims, lookup({ sa: { uid: SA.uid }, pod: { uid: 'pod-uid' } }), { now: NOW + 10 }), {
    user: {
      name: 'system:serviceaccount:ci:builder',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'],
      extra: {
        'authentication.kubernetes.io/pod-name': ['job-1'],
        'authentication.kubernetes.io/pod-uid': ['pod-uid'],
        'authentication.kubernetes.io/node-name': ['berth-dev'],
        'authentication.kubernetes.io/node-uid': ['n'],
        'authentication.kubernetes.io/credential-id': ['JTI=j'],
      },
    },
  });
});

test('validation: expiry, not-before and issued-at with the real minute of leeway', () => {
  const claims = tokenClaims({ namespace: 'ci', serviceAccount: SA }, { audiences: [ISSUER], expirationSeconds: 600, now: NOW });
  const at = (now: number) => validateClaims(claims, lookup(), { now });
  assert.ok('user' in at(NOW + 600 + 60), 'within the leeway');
  assert.deepEqual(at(NOW + 600 + 61), { error: 'service account token has expired' });
  assert.deepEqual(at(NOW - 61), { error: 'service account token is not valid yet' });
  assert.ok('user' in at(NOW - 60));
  const future = { ...claims, nbf: NOW - 1000, iat: NOW + 1000 };
  assert.deepEqual(validateClaims(future, lookup(), { now: NOW }), { error: 'service account token is issued in the future' });
});

test('validation: issuer and audiences must be the API server\'s', () => {
  const claims = tokenClaims({ namespace: 'ci', serviceAccount: SA }, { audiences: ['vault'], expirationSeconds: 600, now: NOW });
  assert.match((validateClaims(claims, lookup(), { now: NOW }) as { error: string }).error, /token audiences \["vault"\] is invalid/);
  assert.ok('user' in validateClaims({ ...claims, aud: ['vault', ISSUER] }, lookup(), { now: NOW }), 'one audience in common is enough');
  assert.ok('error' in validateClaims({ ...claims, aud: [ISSUER], iss: 'https://elsewhere' }, lookup(), { now: NOW }));
  assert.ok('error' in validateClaims({ ...claims, aud: [ISSUER], sub: 'system:serviceaccount:ci:other' }, lookup(), { now: NOW }));
});

test('validation: the ServiceAccount must exist with the uid of the claim', () => {
  const claims = tokenClaims({ namespace: 'ci', serviceAccount: SA }, { audiences: [ISSUER], expirationSeconds: 600, now: NOW });
  assert.deepEqual(validateClaims(claims, lookup({}), { now: NOW }), { error: 'serviceaccounts "builder" not found' });
  assert.deepEqual(validateClaims(claims, lookup({ sa: { uid: 'recreated' } }), { now: NOW }), { error: 'service account UID (recreated) does not match claim (sa-uid)' });
  const deleting = { uid: SA.uid, deletionTimestamp: new Date((NOW - 61) * 1000).toISOString() };
  assert.deepEqual(validateClaims(claims, lookup({ sa: deleting }), { now: NOW }), { error: 'service account ci/builder has been deleted' });
});

test('validation: a bound pod or secret must still exist, same uid, not deleted over a minute ago', () => {
  const podBound = tokenClaims({ namespace: 'ci', serviceAccount: SA, pod: { name: 'job-1', uid: 'p1' } }, { audiences: [ISSUER], expirationSeconds: 600, now: NOW });
  const sa = { uid: SA.uid };
  assert.deepEqual(validateClaims(podBound, lookup({ sa }), { now: NOW }), { error: 'service account token has been invalidated' });
  assert.deepEqual(validateClaims(podBound, lookup({ sa, pod: { uid: 'p2' } }), { now: NOW }), { error: 'pod UID (p2) does not match service account pod ref claim (p1)' });
  const terminating = (secondsAgo: number) => ({ uid: 'p1', deletionTimestamp: new Date((NOW - secondsAgo) * 1000).toISOString() });
  assert.ok('user' in validateClaims(podBound, lookup({ sa, pod: terminating(30) }), { now: NOW }), 'a pod still in its grace period');
  assert.ok('error' in validateClaims(podBound, lookup({ sa, pod: terminating(61) }), { now: NOW }));
  const secretBound = tokenClaims({ namespace: 'ci', serviceAccount: SA, secret: { name: 'bound', uid: 's1' } }, { audiences: [ISSUER], expirationSeconds: 600, now: NOW });
  assert.ok('user' in validateClaims(secretBound, lookup({ sa, secret: { uid: 's1' } }), { now: NOW }));
  assert.deepEqual(validateClaims(secretBound, lookup({ sa }), { now: NOW }), { error: 'service account token has been invalidated' });
});

test('authentication: users-file tokens first, then the cluster\'s signed tokens; anything else is no user', () => {
  const store = new MemoryStore();
  const sa = store.create(resourceByKind('ServiceAccount'), 'ci', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder', namespace: 'ci' } });
  const live = (kind: string) => (ns: string, name: string) => {
    const o = store.tryGet(resourceByKind(kind), ns, name);
    return o && { uid: o.metadata.uid, deletionTimestamp: o.metadata.deletionTimestamp };
  };
  const tokens = new ServiceAccountTokens({ serviceAccount: live('ServiceAccount'), pod: live('Pod'), secret: live('Secret') });
  const logged: string[] = [];
  const auth = new UnionAuthenticator([new TokenAuthenticator([{ name: 'shim', token: 's3cret', groups: [] }]), new ServiceAccountTokenAuthenticator(tokens, (l) => logged.push(l))]);
  const { token } = tokens.issue({ namespace: 'ci', serviceAccount: { name: 'builder', uid: sa.metadata.uid! } }, { audiences: [ISSUER], expirationSeconds: 600 });
  assert.equal(auth.authenticate(`Bearer ${token}`)?.name, 'system:serviceaccount:ci:builder');
  assert.equal(auth.authenticate('Bearer s3cret')?.name, 'shim');
  const foreign = new ServiceAccountTokens({ serviceAccount: live('ServiceAccount'), pod: live('Pod'), secret: live('Secret') });
  assert.equal(auth.authenticate(`Bearer ${foreign.issue({ namespace: 'ci', serviceAccount: { name: 'builder', uid: sa.metadata.uid! } }, { audiences: [ISSUER], expirationSeconds: 600 }).token}`), undefined, 'signed by another key');
  store.remove(resourceByKind('ServiceAccount'), 'ci', 'builder');
  assert.equal(auth.authenticate(`Bearer ${token}`), undefined);
  assert.deepEqual(logged, ['devcluster: service account token refused: serviceaccounts "builder" not found']);
});

function storeWithPod(): { store: MemoryStore; tokens: ServiceAccountTokens; pod: KubeObject } {
  const store = new MemoryStore();
  store.create(resourceByKind('ServiceAccount'), 'ci', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder', namespace: 'ci' } });
  store.create(resourceByKind('ServiceAccount'), 'ci', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'ci' } });
  const pod = store.create(resourceByKind('Pod'), 'ci', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'job-1', namespace: 'ci' },
    spec: { serviceAccountName: 'builder', nodeName: 'berth-dev', containers: [{ name: 'c', image: 'x' }] },
  });
  const none = () => undefined;
  return { store, tokens: new ServiceAccountTokens({ serviceAccount: none, pod: none, secret: none }), pod };
}

const payload = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());

test('TokenRequest: defaults, the 10-minute minimum, and the year-long pod-bound projected token', () => {
  const { store, tokens, pod } = storeWithPod();
  const plain = issueTokenRequest(store, tokens, 'ci', 'builder', {});
  assert.deepEqual(plain.spec, { audiences: [ISSUER], expirationSeconds: 3600, boundObjectRef: null });
  assert.equal(payload(plain.token).exp - payload(plain.token).iat, 3600);
  assert.equal(Date.parse(plain.expirationTimestamp) - Date.parse(plain.creationTimestamp) <= 3600_000, true);

  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'builder', { expirationSeconds: 599 }), {
    code: 422,
    message: 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
  });
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'builder', { expirationSeconds: 2 ** 32 + 1 }), { code: 422, message: /larger than 2\^32 seconds/ });
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'nobody', {}), { code: 404, message: 'serviceaccounts "nobody" not found' });

  const ref = { kind: 'Pod', apiVersion: 'v1', name: 'job-1', uid: pod.metadata.uid };
  const projected = issueTokenRequest(store, tokens, 'ci', 'builder', { expirationSeconds: 3607, boundObjectRef: ref });
  const c = payload(projected.token);
  assert.equal(c.exp - c.iat, 365 * 24 * 3600, 'extended');
  assert.equal(c['kubernetes.io'].warnafter - c.iat, 3607);
  assert.deepEqual(c['kubernetes.io'].pod, { name: 'job-1', uid: pod.metadata.uid });
  assert.equal(c['kubernetes.io'].node.name, 'berth-dev');
  const forVault = payload(issueTokenRequest(store, tokens, 'ci', 'builder', { expirationSeconds: 3607, audiences: ['vault'], boundObjectRef: ref }).token);
  assert.equal(forVault.exp - forVault.iat, 3607, 'not extended for another audience');
  const unbound = payload(issueTokenRequest(store, tokens, 'ci', 'builder', { expirationSeconds: 3607 }).token);
  assert.equal(unbound.exp - unbound.iat, 3607, 'not extended without a pod');
});

test('TokenRequest: binding checks as the registry makes them', () => {
  const { store, tokens } = storeWithPod();
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'job-1' } }), {
    code: 400,
    message: 'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.',
  });
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'job-1', uid: 'old' } }), {
    code: 409,
    message: /^Operation cannot be fulfilled on Pod "job-1": the UID in the bound object reference \(old\) does not match the UID in record/,
  });
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'builder', { boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'd' } }), {
    code: 400,
    message: 'cannot bind token to object of type apps/v1, Kind=Deployment',
  });
  assert.throws(() => issueTokenRequest(store, tokens, 'ci', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'gone' } }), { code: 404, message: 'pods "gone" not found' });
});

test('TokenRequest sent as protobuf (kubectl create token) reads as its JSON', () => {
  const varint = (n: number) => {
    const out: number[] = [];
    while (n > 0x7f) {
      out.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    out.push(n);
    return Buffer.from(out);
  };
  const bytes = (num: number, v: Buffer | string) => {
    const b = Buffer.isBuffer(v) ? v : Buffer.from(v);
    return Buffer.concat([varint((num << 3) | 2), varint(b.length), b]);
  };
  const int = (num: number, v: number) => Buffer.concat([varint(num << 3), varint(v)]);
  const spec = Buffer.concat([bytes(1, 'vault'), bytes(3, Buffer.concat([bytes(1, 'Pod'), bytes(2, 'v1'), bytes(3, 'job-1'), bytes(4, '')])), int(4, 1200)]);
  const obj = Buffer.concat([bytes(1, Buffer.alloc(0)), bytes(2, spec)]);
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes(1, Buffer.concat([bytes(1, 'authentication.k8s.io/v1'), bytes(2, 'TokenRequest')])), bytes(2, obj)]);
  assert.deepEqual(decodeProtobufObject(body), {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: {},
    spec: { audiences: ['vault'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'job-1' }, expirationSeconds: 1200 },
  });
});

function newPod(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ci' }, spec: { serviceAccountName: 'default', ...spec } };
}

test('admission: the kube-api-access volume in every container and init container, unless one mounts the path itself', () => {
  const { store } = storeWithPod();
  const pod = newPod({
    initContainers: [{ name: 'init', image: 'x' }],
    containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x', volumeMounts: [{ name: 'own', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
    volumes: [{ name: 'own', emptyDir: {} }],
  });
  admitPodServiceAccount(store, 'ci', pod);
  const volume = pod.spec.volumes[1];
  assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.equal(volume.projected.sources[0].serviceAccountToken.expirationSeconds, 3607);
  const mount = { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
  assert.deepEqual(pod.spec.initContainers[0].volumeMounts, [mount]);
  assert.deepEqual(pod.spec.containers[0].volumeMounts, [mount]);
  assert.deepEqual(pod.spec.containers[1].volumeMounts, [{ name: 'own', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);

  const copy = newPod({ containers: [{ name: 'a', image: 'x' }], volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [] } }] });
  admitPodServiceAccount(store, 'ci', copy);
  assert.equal(copy.spec.volumes.length, 1, 'a copied pod keeps its token volume');
  assert.equal(copy.spec.containers[0].volumeMounts[0].name, 'kube-api-access-abcde');
});

test('admission: automount opt-outs, imagePullSecrets from the ServiceAccount, a missing ServiceAccount refused', () => {
  const { store } = storeWithPod();
  const off = newPod({ automountServiceAccountToken: false, containers: [{ name: 'a', image: 'x' }] });
  admitPodServiceAccount(store, 'ci', off);
  assert.equal(off.spec.volumes, undefined);
  assert.equal(off.spec.containers[0].volumeMounts, undefined);

  store.create(resourceByKind('ServiceAccount'), 'ci', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'quiet', namespace: 'ci' },
    automountServiceAccountToken: false,
    imagePullSecrets: [{ name: 'regcred' }],
  });
  const quiet = newPod({ serviceAccountName: 'quiet', containers: [{ name: 'a', image: 'x' }] });
  admitPodServiceAccount(store, 'ci', quiet);
  assert.equal(quiet.spec.volumes, undefined);
  assert.deepEqual(quiet.spec.imagePullSecrets, [{ name: 'regcred' }]);
  const podWins = newPod({ serviceAccountName: 'quiet', automountServiceAccountToken: true, containers: [{ name: 'a', image: 'x' }] });
  admitPodServiceAccount(store, 'ci', podWins);
  assert.equal(podWins.spec.volumes.length, 1, 'the pod\'s preference wins');

  assert.throws(() => admitPodServiceAccount(store, 'ci', newPod({ serviceAccountName: 'nope', containers: [] })), {
    code: 403,
    message: 'pods "p" is forbidden: error looking up service account ci/nope: serviceaccount "nope" not found',
  });
});

test('kubelet variables for the kubernetes Service point at the API server\'s address for pods', () => {
  assert.deepEqual(Object.fromEntries(kubernetesServiceEnv({ host: '10.88.0.1', port: 6443 })), {
    KUBERNETES_SERVICE_HOST: '10.88.0.1',
    KUBERNETES_SERVICE_PORT: '6443',
    KUBERNETES_SERVICE_PORT_HTTPS: '6443',
    KUBERNETES_PORT: 'tcp://10.88.0.1:6443',
    KUBERNETES_PORT_6443_TCP: 'tcp://10.88.0.1:6443',
    KUBERNETES_PORT_6443_TCP_PROTO: 'tcp',
    KUBERNETES_PORT_6443_TCP_PORT: '6443',
    KUBERNETES_PORT_6443_TCP_ADDR: '10.88.0.1',
  });
});

test('legacy Secret-based tokens: valid while the Secret holds that very token and the ServiceAccount lives', () => {
  const secretToken = { value: '' };
  const objects: { sa?: LiveObject; secret?: LiveObject } = { sa: { uid: SA.uid } };
  const tokens = new ServiceAccountTokens({
    serviceAccount: (ns, name) => (ns === 'ci' && name === SA.name ? objects.sa : undefined),
    pod: () => undefined,
    secret: (ns, name) => (ns === 'ci' && name === 'ci-token' ? objects.secret : undefined),
  });
  secretToken.value = tokens.issueLegacy('ci', SA, 'ci-token');
  assert.deepEqual(payload(secretToken.value), {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'ci',
    'kubernetes.io/serviceaccount/secret.name': 'ci-token',
    'kubernetes.io/serviceaccount/service-account.name': 'builder',
    'kubernetes.io/serviceaccount/service-account.uid': 'sa-uid',
    sub: 'system:serviceaccount:ci:builder',
  });
  assert.deepEqual(tokens.authenticate(secretToken.value), { error: 'token has been invalidated' }, 'no Secret');
  objects.secret = { uid: 's', token: 'another' };
  assert.deepEqual(tokens.authenticate(secretToken.value), { error: "token does not match server's copy" });
  objects.secret = { uid: 's', token: secretToken.value };
  assert.equal((tokens.authenticate(secretToken.value) as { user: { name: string } }).user.name, 'system:serviceaccount:ci:builder');
  objects.sa = { uid: 'recreated' };
  assert.ok('error' in tokens.authenticate(secretToken.value)!);
});

test('projected tokens: written at mount, rotated in place at 80% of their lifetime (at most a day), as the kubelet does', () => {
  const dir = scratchDir('berth-sa-vol-');
  try {
    const { store } = storeWithPod();
    store.create(resourceByKind('ConfigMap'), 'ci', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt', namespace: 'ci' }, data: { 'ca.crt': 'CA' } });
    let issued = 0;
    const asked: unknown[] = [];
    const ctx: VolumeContext = {
      store,
      pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'job-1', namespace: 'ci' } },
      nodeName: 'n',
      hostIP: '10.88.0.1',
      nodeMemory: 2 ** 30,
      dirs: { podVolumes: dir, podMemoryVolumes: dir, claims: dir },
      serviceAccountToken: (projection) => {
        asked.push(projection);
        return `token-${++issued}`;
      },
    };
    const volume = { name: 'kube-api-access-abcde', projected: tokenVolumeSource() };
    const path = materializeVolume(volume, ctx);
    assert.equal(readFileSync(join(path, 'token'), 'utf8'), 'token-1');
    assert.equal(readFileSync(join(path, 'ca.crt'), 'utf8'), 'CA');
    assert.equal(readFileSync(join(path, 'namespace'), 'utf8'), 'ci');
    assert.equal(statSync(join(path, 'token')).mode & 0o777, 0o644);
    assert.deepEqual(asked, [{ audience: undefined, expirationSeconds: 3607 }]);
    const inode = statSync(path).ino;
    refreshVolumeTokens(volume, ctx);
    assert.equal(readFileSync(join(path, 'token'), 'utf8'), 'token-2');
    assert.equal(statSync(path).ino, inode, 'the bind-mounted directory stays');
    assert.equal(tokenRefreshSeconds(volume), 0.8 * 3607);
    assert.equal(tokenRefreshSeconds({ name: 'v', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 7 * 24 * 3600, path: 't' } }] } }), 24 * 3600);
    assert.equal(tokenRefreshSeconds({ name: 'v', emptyDir: {} }), undefined);
    assert.throws(() => materializeVolume(volume, { ...ctx, serviceAccountToken: () => { throw new Error('serviceaccounts "builder" not found'); } }), {
      message: 'failed to fetch token: serviceaccounts "builder" not found',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
