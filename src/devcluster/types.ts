// Contracts between the dev cluster's parts: the API server (api/, server/), the node that runs pods on
// podman (node/) and the stream protocols (streams/). The dev cluster imports nothing from the rest of berth.
import type { Duplex, Readable, Writable } from 'node:stream';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

/** Any Kubernetes object as JSON. Typed loosely on purpose: the server stores what clients send. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: any;
}

/** One REST resource the server serves (also what discovery lists). */
export interface ResourceType {
  group: string; // '' for core
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** subresources served, e.g. ['status', 'log', 'exec', 'attach', 'portforward'] */
  subresources?: string[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** absent: synthetic ADDED for every current object first; '0': same; otherwise events after it */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchHandle {
  stop(): void;
}

/** Who is calling, after authentication. */
export interface UserInfo {
  name: string;
  groups: string[];
  /** a service account's uid, or set by impersonation (Impersonate-Uid); users-file users have none */
  uid?: string;
  /** a service account token's pod, node and credential id, or set by impersonation (Impersonate-Extra-KEY), keys lower-cased */
  extra?: Record<string, string[]>;
}

/** What a request wants to do, as RBAC sees it. */
export interface RequestAttributes {
  verb: string; // get list watch create update patch delete deletecollection
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** for non-resource requests such as /version, /api, /healthz */
  nonResourcePath?: string;
}

/** Fault switches for reliability tests, and the kubelet's log rotation; changed at run time through the admin endpoint. */
export interface Faults {
  /** drop exec/attach sockets without a status frame, and WebSocket port-forwards once connected, this fraction of sessions (0..1) */
  dropStreams: number;
  /** answer 500 InternalError to this fraction of API requests (0..1); streams and /healthz excluded */
  error500: number;
  /** end every watch after this many ms (0 = off) */
  endWatchAfterMs: number;
  /** delay the start of every pod's containers by this many ms */
  delayPodStartMs: number;
  /** refuse the next N port-forward upgrades with 500 InternalError; each refusal counts it down */
  failPortForwards: number;
  /**
   * the kubelet's containerLogMaxSize, in bytes: a running container's log file this large is rotated, and
   * `pods/log` then serves only the new file (0 = never). Smaller than the kubelet's 10 MiB, it lets a test
   * see what a real cluster does to a long-running container's log.
   */
  containerLogMaxBytes: number;
  /** the kubelet's containerLogMonitorInterval, in ms: how often a log's size is looked at (10 s) */
  containerLogCheckMs: number;
}

/** what a kubelet does by default: containerLogMaxSize 10Mi, containerLogMonitorInterval 10s */
export const KUBELET_LOG_ROTATION = { containerLogMaxBytes: 10 * 1024 * 1024, containerLogCheckMs: 10_000 } as const;

export const noFaults = (): Faults => ({ dropStreams: 0, error500: 0, endWatchAfterMs: 0, delayPodStartMs: 0, failPortForwards: 0, ...KUBELET_LOG_ROTATION });

// ---- node <-> server ----

export type ExitResult = { exitCode: number } | { error: string };

/** A running exec or attach session. Streams are null when the request did not ask for them. */
export interface StreamSession {
  stdin: Writable | null;
  stdout: Readable | null;
  /** null when tty (the terminal merges stderr into stdout) or not requested */
  stderr: Readable | null;
  resize(width: number, height: number): void;
  /** exec: the process's exit; attach: the end of the session (exitCode 0) or the container's end */
  done: Promise<ExitResult>;
  /** the client went away: stop the exec process (an attach leaves the container running) */
  abort(): void;
}

export interface LogOptions {
  container?: string;
  follow?: boolean;
  previous?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
  timestamps?: boolean;
  /** KEP-3288 split streams: 'Stdout' | 'Stderr' | 'All' (default) */
  stream?: string;
}

export interface ExecOptions {
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface AttachOptions {
  container: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * What the API server asks of the node. Methods throw ApiError (api/errors.ts) for the cases the real
 * kubelet answers with a Status: unknown container (400 BadRequest), container not running (400).
 */
export interface NodeRuntime {
  readonly nodeName: string;
  start(): Promise<void>;
  /** stop every container and remove every podman pod of this cluster */
  stop(): Promise<void>;
  exec(pod: KubeObject, opts: ExecOptions): Promise<StreamSession>;
  attach(pod: KubeObject, opts: AttachOptions): Promise<StreamSession>;
  /** the log as the API serves it (bytes, ends unless follow) */
  logs(pod: KubeObject, opts: LogOptions): Promise<Readable>;
  /** a TCP connection to `port` inside the pod's network namespace */
  portForward(pod: KubeObject, port: number): Promise<Duplex>;
}

// ---- the object store (api/store.ts implements it; the node and the handlers use it in-process) ----

export interface UpdateOptions {
  /** 'status' writes only .status; otherwise .status of the stored object is kept for kinds with a status subresource */
  subresource?: 'status';
}

export interface ObjectStore {
  /** assigns uid, name (from generateName), resourceVersion, creationTimestamp; throws AlreadyExists */
  create(rt: ResourceType, namespace: string | undefined, obj: KubeObject): KubeObject;
  /** throws NotFound */
  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObject;
  tryGet(rt: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined;
  /** namespace undefined = all namespaces */
  list(rt: ResourceType, namespace: string | undefined, opts?: ListOptions): ListResult;
  /** replaces the object named by obj.metadata.name; 409 Conflict when obj.metadata.resourceVersion is stale */
  update(rt: ResourceType, namespace: string | undefined, obj: KubeObject, opts?: UpdateOptions): KubeObject;
  /** read-modify-write without conflicts, for in-process controllers (the node, garbage collection) */
  mutate(rt: ResourceType, namespace: string | undefined, name: string, change: (obj: KubeObject) => void, opts?: UpdateOptions): KubeObject;
  /** removes at once and emits DELETED with the last state; throws NotFound */
  remove(rt: ResourceType, namespace: string | undefined, name: string): KubeObject;
  /** throws ApiError 410 Expired when opts.resourceVersion is older than the kept history */
  watch(rt: ResourceType, namespace: string | undefined, opts: WatchOptions, onEvent: (event: WatchEvent) => void): WatchHandle;
  /** the newest resourceVersion issued */
  resourceVersion(): string;
}
