/**
 * The config of an image (ExposedPorts, Healthcheck, User, Env, Cmd, …) read from its registry, so
 * that `-P`, HEALTHCHECK and inspect work as on dockerd although the kubelet, not berth, pulls the
 * image. An index (multi-platform image) is narrowed to the machine's platform. A lookup that fails
 * (no registry reachable, unknown image, credentials needed) only leaves the config unknown.
 */
import os from 'node:os';
import { sha256Digest, RepositoryReader } from '../../registry/distribution.js';
import { parseImageReference } from '../../registry/reference.js';

export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const ACCEPT = [OCI_INDEX, DOCKER_MANIFEST_LIST, OCI_MANIFEST, DOCKER_MANIFEST];

export interface HealthConfig {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  Retries?: number;
  StartPeriod?: number;
  StartInterval?: number;
}

/** The `config` object of an image config blob (docker's names, which OCI shares). */
export interface ImageConfig {
  User?: string;
  ExposedPorts?: Record<string, object> | null;
  Env?: string[] | null;
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  Healthcheck?: HealthConfig | null;
  WorkingDir?: string;
  Labels?: Record<string, string> | null;
  StopSignal?: string;
}

export interface ImageInfo {
  config: ImageConfig;
  /** Digest of the config blob (docker's image ID). */
  configDigest: string;
  /** `name@sha256:…` of the manifest (or index) the reference named. */
  repoDigest: string;
  created?: string;
  architecture?: string;
  os?: string;
}

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: Partial<Platform>;
}

type Manifest = { kind: 'index'; manifests: Descriptor[] } | { kind: 'image'; config: Descriptor };

export class ImageConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageConfigError';
  }
}

/** The platform images are chosen for: this machine's, in Go's names (the cluster's nodes are assumed alike). */
export function machinePlatform(): Platform {
  const arch = os.arch();
  if (arch === 'x64') return { os: 'linux', architecture: 'amd64' };
  if (arch === 'arm64') return { os: 'linux', architecture: 'arm64', variant: 'v8' };
  if (arch === 'arm') return { os: 'linux', architecture: 'arm', variant: 'v7' };
  if (arch === 'ia32') return { os: 'linux', architecture: '386' };
  return { os: 'linux', architecture: arch };
}

/** Reads a manifest or index body; the media type comes from the body, else from Content-Type. */
export function parseManifest(body: Buffer | string, contentType = ''): Manifest {
  let doc: { schemaVersion?: number; mediaType?: string; manifests?: Descriptor[]; config?: Descriptor };
  try {
    doc = JSON.parse(body.toString()) as typeof doc;
  } catch {
    throw new ImageConfigError('the manifest is not JSON');
  }
  const type = doc.mediaType ?? contentType.split(';')[0].trim();
  if (doc.schemaVersion === 1) throw new ImageConfigError('the manifest is docker schema 1, which carries no config blob');
  if (type === OCI_INDEX || type === DOCKER_MANIFEST_LIST || (Array.isArray(doc.manifests) && !doc.config))
    return { kind: 'index', manifests: doc.manifests ?? [] };
  if (doc.config?.digest) return { kind: 'image', config: doc.config };
  throw new ImageConfigError(`the manifest (${type || 'no media type'}) names no config blob`);
}

/** The index entry for `want`: same os and architecture, the same variant preferred (arm64 entries often name none). */
export function selectPlatformManifest(manifests: readonly Descriptor[], want: Platform): Descriptor {
  const same = manifests.filter((m) => m.platform?.os === want.os && m.platform?.architecture === want.architecture);
  const chosen = same.find((m) => (m.platform?.variant ?? '') === (want.variant ?? '')) ?? same.find((m) => !m.platform?.variant) ?? same[0];
  if (chosen) return chosen;
  const offered = manifests
    .map((m) => [m.platform?.os, m.platform?.architecture, m.platform?.variant].filter(Boolean).join('/'))
    .filter((p) => p && !p.startsWith('unknown'));
  throw new ImageConfigError(
    `the image has no ${[want.os, want.architecture, want.variant].filter(Boolean).join('/')} variant (it has ${offered.join(', ') || 'none'})`,
  );
}

export interface ReadOptions {
  insecure?: readonly string[];
  platform?: Platform;
  /** Per request. */
  timeoutMs?: number;
  /** All requests of one lookup together. */
  totalMs?: number;
}

/** Fetches manifest (through the index, if any) and config blob; every body is checked against its digest. */
export async function readImageInfo(ref: string, opts: ReadOptions = {}): Promise<ImageInfo> {
  const r = parseImageReference(ref);
  const reader = new RepositoryReader(r.registry, r.repository, {
    insecure: opts.insecure,
    timeoutMs: opts.timeoutMs,
    deadline: Date.now() + (opts.totalMs ?? 10_000),
  });
  const top = await reader.manifest(r.digest ?? r.tag ?? 'latest', ACCEPT);
  const topDigest = sha256Digest(top.body);
  if (r.digest && r.digest !== topDigest) throw new ImageConfigError(`the registry sent a manifest of digest ${topDigest} for ${ref}`);
  let manifest = parseManifest(top.body, String(top.headers['content-type'] ?? ''));
  if (manifest.kind === 'index') {
    const entry = selectPlatformManifest(manifest.manifests, opts.platform ?? machinePlatform());
    const res = await reader.manifest(entry.digest, ACCEPT);
    if (sha256Digest(res.body) !== entry.digest) throw new ImageConfigError(`the manifest ${entry.digest} of ${ref} does not match its digest`);
    manifest = parseManifest(res.body, String(res.headers['content-type'] ?? ''));
    if (manifest.kind === 'index') throw new ImageConfigError(`the index of ${ref} points to another index`);
  }
  const blob = await reader.blob(manifest.config.digest);
  if (sha256Digest(blob.body) !== manifest.config.digest)
    throw new ImageConfigError(`the config blob of ${ref} does not match its digest ${manifest.config.digest}`);
  let doc: { config?: ImageConfig | null; created?: string; architecture?: string; os?: string };
  try {
    doc = JSON.parse(blob.body.toString('utf8')) as typeof doc;
  } catch {
    throw new ImageConfigError(`the config blob of ${ref} is not JSON`);
  }
  return {
    config: doc.config ?? {},
    configDigest: manifest.config.digest,
    repoDigest: `${r.familiar}@${topDigest}`,
    created: doc.created,
    architecture: doc.architecture,
    os: doc.os,
  };
}

export type ImageLookup = { info: ImageInfo } | { reason: string };

export interface ImageConfigSourceOptions extends ReadOptions {
  /** Where a failed lookup is reported, once per reference until one succeeds. */
  log: (line: string) => void;
}

/** Lookups cached per reference (failures too, so an unreachable registry is asked once, not at every create). */
export class ImageConfigSource {
  private readonly cache = new Map<string, Promise<ImageLookup>>();
  private readonly reported = new Set<string>();

  constructor(private readonly opts: ImageConfigSourceOptions) {
    for (const r of opts.insecure ?? []) {
      if (!/^[a-zA-Z0-9.-]+(:\d+)?$|^\[[0-9a-fA-F:]+\](:\d+)?$/.test(r))
        throw new ImageConfigError(`--insecure-registry ${r}: give host[:port] as it appears in image names (e.g. registry.lan:5000)`);
    }
  }

  /** `fresh` asks the registry again (a pull), otherwise an earlier answer stands. */
  lookUp(ref: string, fresh = false): Promise<ImageLookup> {
    const cached = this.cache.get(ref);
    if (cached && !fresh) return cached;
    if (isLocalImage(ref)) return Promise.resolve({ reason: 'localhost/ without a port names an image built on the node (podman); no registry holds it' });
    const lookup = readImageInfo(ref, this.opts).then(
      (info): ImageLookup => {
        this.reported.delete(ref);
        return { info };
      },
      (err: Error): ImageLookup => {
        if (!this.reported.has(ref)) {
          this.reported.add(ref);
          this.opts.log(
            `image config of ${ref} not read (${err.message}); its containers get only what the client sends (start berth serve with --insecure-registry for a plain-http registry, --no-image-config to stop asking)`,
          );
        }
        return { reason: err.message };
      },
    );
    this.cache.set(ref, lookup);
    return lookup;
  }
}

/** podman names images it built `localhost/...`; a real registry on localhost always has a port here. */
export function isLocalImage(ref: string): boolean {
  try {
    return parseImageReference(ref).domain === 'localhost';
  } catch {
    return false;
  }
}
