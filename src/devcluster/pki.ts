// The cluster's certificates and keys, kept in the state dir so kubeconfigs written earlier stay valid across
// restarts: the CA, the API server's serving certificate, the API server's client certificate for the kubelet,
// the fault proxy's serving certificate and the service-account signing key.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCa, issueClientCert, issueServerCert, type PemPair } from './tls.js';
import { NET } from './layout.js';

export const APISERVER_KUBELET_CLIENT = 'kube-apiserver-kubelet-client';

const API_NAMES = [NET.nodeIp, NET.apiServiceIp, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${NET.clusterDomain}`];

function pair(dir: string, name: string, make: () => PemPair): PemPair {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (existsSync(cert) && existsSync(key)) return { certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
  const made = make();
  writeFileSync(key, made.keyPem, { mode: 0o600 });
  writeFileSync(cert, made.certPem);
  return made;
}

export interface Pki {
  ca: PemPair;
  proxy: PemPair;
}

export function ensurePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = pair(dir, 'ca', () => generateCa('berth-dev-cluster-ca'));
  pair(dir, 'apiserver', () => issueServerCert(ca, API_NAMES));
  pair(dir, APISERVER_KUBELET_CLIENT, () => issueClientCert(ca, APISERVER_KUBELET_CLIENT));
  const proxy = pair(dir, 'proxy', () => issueServerCert(ca, []));
  if (!existsSync(join(dir, 'sa.key'))) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  }
  return { ca, proxy };
}
