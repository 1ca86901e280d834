/**
 * KEP-2906 function catalogs as berth holds them once parsed: a Catalog (or a lone
 * KRMFunctionDefinition, which berth treats as a catalog of one) with where it came from.
 */

export const CATALOG_API_VERSION = 'config.kubernetes.io/v1alpha1';

export interface ContainerProvider {
  image: string;
  /** Digest of the image; when set, berth runs `image@sha256:...`. */
  sha256?: string;
  requireNetwork?: boolean;
  requireStorageMount?: boolean;
}

export interface ExecPlatform {
  bin: string;
  os: 'linux' | 'darwin' | 'windows';
  arch: 'amd64' | 'arm64';
  /** https URL, file URL, or a path relative to the catalog's own location. */
  uri: string;
  sha256: string;
}

export interface FunctionRuntime {
  container?: ContainerProvider;
  exec?: { platforms: ExecPlatform[] };
}

export interface FunctionVersion {
  name: string;
  /** berth extension, as CRD versions have it: resolution still works but warns. */
  deprecated?: boolean;
  deprecationWarning?: string;
  idempotent?: boolean;
  license?: string;
  usage?: string;
  examples?: string[];
  schema?: { openAPIV3Schema?: Record<string, unknown> };
  runtime: FunctionRuntime;
}

export interface FunctionDefinition {
  group: string;
  names: { kind: string };
  description: string;
  publisher: string;
  home?: string;
  tags?: string[];
  versions: FunctionVersion[];
}

export interface Catalog {
  name: string;
  /** The reference the user gave (path, URL or OCI reference): what messages and flags name. */
  ref: string;
  /** Base for relative exec `uri`s: a file: or https: URL. */
  base: string;
  /** sha256 of the catalog bytes as read. */
  digest: string;
  publisher?: string;
  functions: FunctionDefinition[];
}
