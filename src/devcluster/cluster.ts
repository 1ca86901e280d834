// Assembles one dev cluster: the object store, the node on podman, authentication (users and service account
// tokens), RBAC and the HTTPS API server, on loopback for clients and on the pod network's gateway for pods.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryStore } from './api/store.js';
import { ApiServer } from './server/apiserver.js';
import { ServiceAccountTokenAuthenticator, TokenAuthenticator, UnionAuthenticator } from './server/auth.js';
import { issueTokenRequest } from './server/handlers-token-request.js';
import { isWildcard, listenForPods } from './server/pod-endpoint.js';
import { ServiceAccountTokens, type TokenLookup } from './server/service-account-tokens.js';
import { renderKubeconfig } from './server/kubeconfig.js';
import { RbacAuthorizer } from './server/rbac.js';
import { generateCa, issueServerCert } from './server/tls.js';
import { loadUsersFile, type UserSpec } from './server/users-file.js';
import { PodmanNode } from './node/podman-node.js';
import { resourceByKind } from './api/resources.js';
import { noFaults, type Faults, type KubeObject, type ObjectStore } from './types.js';

export interface DevClusterOptions {
  stateDir: string;
  /** 0 = any free port */
  port: number;
  host?: string;
  usersFile?: string;
  podman?: string;
  podmanArgs?: string[];
  faults?: Partial<Faults>;
  /** watch history kept for resume; older resourceVersions get 410 Expired */
  historyLimit?: number;
}

export interface RunningDevCluster {
  server: string;
  clusterId: string;
  kubeconfigPath: string;
  users: { name: string; token: string }[];
  faults: Faults;
  stop(): Promise<void>;
}

export const CLUSTER_NAME = 'berth-dev';

/** The cluster's CA is kept in the state dir so kubeconfigs written earlier stay valid across restarts. */
function loadOrCreateCa(stateDir: string): { certPem: string; keyPem: string } {
  const cert = join(stateDir, 'ca.crt');
  const key = join(stateDir, 'ca.key');
  if (existsSync(cert) && existsSync(key)) return { certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
  const ca = generateCa('berth-dev-cluster-ca');
  writeFileSync(cert, ca.certPem);
  writeFileSync(key, ca.keyPem, { mode: 0o600 });
  return ca;
}

/** The admin token is kept too, for the same reason. */
function loadOrCreateAdminToken(stateDir: string): string {
  const file = join(stateDir, 'admin.token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token, { mode: 0o600 });
  return token;
}

/** the objects a service account token names, as they are in the store now */
function storeLookup(store: ObjectStore): TokenLookup {
  const live = (kind: string) => (namespace: string, name: string) => {
    const o = store.tryGet(resourceByKind(kind), namespace, name);
    if (!o) return undefined;
    const token = kind === 'Secret' && typeof o.data?.token === 'string' ? Buffer.from(o.data.token, 'base64').toString('utf8') : undefined;
    return { uid: o.metadata.uid, deletionTimestamp: o.metadata.deletionTimestamp, token, labels: o.metadata.labels };
  };
  return { serviceAccount: live('ServiceAccount'), pod: live('Pod'), secret: live('Secret') };
}

/** what the kubelet's token manager asks the TokenRequest API for a projected serviceAccountToken source */
function podTokenSource(store: ObjectStore, tokens: ServiceAccountTokens) {
  return (pod: KubeObject, projection: { audience?: string; expirationSeconds?: number }): string =>
    issueTokenRequest(store, tokens, pod.metadata.namespace!, pod.spec?.serviceAccountName ?? 'default', {
      audiences: projection.audience ? [projection.audience] : undefined,
      expirationSeconds: projection.expirationSeconds,
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid },
    }).token;
}

export async function startDevCluster(opts: DevClusterOptions): Promise<RunningDevCluster> {
  mkdirSync(opts.stateDir, { recursive: true, mode: 0o700 });
  const fileUsers: UserSpec[] = opts.usersFile ? loadUsersFile(opts.usersFile) : [];
  const ca = loadOrCreateCa(opts.stateDir);
  const host = opts.host ?? '127.0.0.1';
  const clusterId = `bdc-${randomBytes(3).toString('hex')}`;
  const faults: Faults = { ...noFaults(), ...opts.faults };

  const admin = { name: 'admin', token: loadOrCreateAdminToken(opts.stateDir), groups: ['system:masters'] };
  const users = [admin, ...fileUsers.map((u) => ({ name: u.name, token: u.token, groups: u.groups }))];
  const store = new MemoryStore({ historyLimit: opts.historyLimit });
  const serviceAccountTokens = new ServiceAccountTokens(storeLookup(store));
  const node = new PodmanNode({
    store,
    clusterId,
    stateDir: join(opts.stateDir, 'node'),
    faults,
    podman: opts.podman,
    podmanArgs: opts.podmanArgs,
    serviceAccountToken: podTokenSource(store, serviceAccountTokens),
  });
  await node.start();
  // the host's address on the pod network: pods call the API server there, so the certificate names it
  const gateway = node.bridgeGatewayAddress;
  const tls = issueServerCert(ca, [host, 'localhost', '127.0.0.1', ...(gateway ? [gateway] : [])]);
  const authorizer = new RbacAuthorizer(store, new Map(fileUsers.map((u) => [u.name, u.rules])));
  const api = new ApiServer({
    store,
    node,
    authenticator: new UnionAuthenticator([new TokenAuthenticator(users), new ServiceAccountTokenAuthenticator(serviceAccountTokens)]),
    authorizer,
    faults,
    tls: { cert: tls.certPem, key: tls.keyPem },
    caPem: ca.certPem,
    serviceAccountTokens,
  });
  let port: number;
  try {
    port = await api.listen(opts.port, host);
    if (gateway) {
      const podPort = gateway === host || isWildcard(host) ? port : await listenForPods((p, h) => api.listen(p, h), gateway, port);
      if (podPort !== undefined) node.setApiServerAddress({ host: gateway, port: podPort });
      else process.stderr.write(`devcluster: ${gateway}, the pod network's gateway, is no address of this machine: pods get no KUBERNETES_SERVICE_HOST\n`);
    }
  } catch (err) {
    await api.close();
    await node.stop();
    throw err;
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const kubeconfigPath = join(opts.stateDir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    renderKubeconfig({ clusterName: CLUSTER_NAME, server, caPem: ca.certPem, users: users.map(({ name, token }) => ({ name, token })), currentUser: 'admin' }),
    { mode: 0o600 },
  );
  let stopped: Promise<void> | undefined;
  return {
    server,
    clusterId,
    kubeconfigPath,
    users: users.map(({ name, token }) => ({ name, token })),
    faults,
    stop: () => (stopped ??= (async () => {
      await api.close();
      await node.stop();
    })()),
  };
}
