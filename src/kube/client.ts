/**
 * berth's one client of a cluster namespace: every call the runtime and the faces make, each made
 * once. Failures come back as sentences (KubeError). Every idempotent call (get, list, patch, delete,
 * log, an exec whose upgrade was refused) and every create of a fixed name is retried on transient
 * failures (5xx, 429, dropped connections) through retry.ts: one overloaded moment of the API server
 * must not become a failed run or container. A create whose first answer was lost comes back as 409
 * on the next try; the object is read back and taken when it is ours (isOurs). A failure that outlasts
 * the retries says so, and for how long it was retried.
 *
 * Callers see it through narrow interfaces they can fake: KubeCluster (cluster.ts) for runs, ServeCluster
 * (dockerapi/cluster.ts) for berth serve's containers.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Duplex, type Readable, type Writable } from 'node:stream';
import type { V1ConfigMap, V1NetworkPolicy, V1ObjectMeta, V1PersistentVolumeClaim, V1Pod, V1PodTemplate, V1Secret, V1Service } from '@kubernetes/client-node';
import { AuthorizationV1Api, CoreV1Api, NetworkingV1Api, VersionApi, type KubeConfig } from './client-node.js';
import { backoffDelay, type Clock } from './backoff.js';
import { KubeError, statusOf, toKubeError, type KubeAction } from './errors.js';
import { openPodLog, readPodLogBytes, type PodLogQuery } from './pod-log.js';
import { openPortForward } from './port-forward.js';
import { createWithRetry, isTransient, KUBE_BACKOFF, withRetry } from './retry.js';
import { exitCodeOfStatus, openAttach, openExec, openFeedAttach, type StreamSession } from './streams.js';
import { shareConnections } from './shared-connections.js';
import { resumableWatch, watchRequests } from './watch.js';

export type LogQuery = PodLogQuery;

export interface ExecOutcome {
  exitCode: number;
}

/** Answers that hold for the life of the process (see serverVersion and servesSplitLogs). */
const serverVersions = new Map<string, Promise<{ major: number; minor: number }>>();
const splitLogAnswers = new Map<string, Promise<boolean>>();

/** Consecutive transient failures a run's pod watch rides out (with backoff) before it gives up. */
const WATCH_RETRIES = 10;
/** berth serve's reflector never gives up; its waits grow to 5 s so that a sick server is not hammered. */
const REFLECTOR_BACKOFF = { initialMs: 250, maxMs: 5000 };

export interface ClusterClientOptions {
  /** The clock the retries wait on (a test's, so that it need not sleep through them). */
  clock?: Clock;
}

export class ClusterClient {
  readonly server: string;
  private readonly core: CoreV1Api;
  private readonly networking: NetworkingV1Api;
  private readonly podsPath: string;

  constructor(
    readonly kc: KubeConfig,
    readonly namespace: string,
    private readonly opts: ClusterClientOptions = {},
  ) {
    // Every call of every client of this process reuses kept-alive connections (shared-connections.ts).
    shareConnections(kc);
    this.core = kc.makeApiClient(CoreV1Api);
    this.networking = kc.makeApiClient(NetworkingV1Api);
    this.server = kc.getCurrentCluster()?.server ?? '';
    this.podsPath = `/api/v1/namespaces/${namespace}/pods`;
  }

  // --- pods

  createPod(pod: V1Pod): Promise<V1Pod> {
    const name = pod.metadata?.name ?? '';
    return this.created(
      pod,
      () => this.core.createNamespacedPod({ namespace: this.namespace, body: pod }),
      () => this.core.readNamespacedPod({ namespace: this.namespace, name }),
      'pods',
    );
  }

  readPod(name: string): Promise<V1Pod> {
    return this.retried(() => this.core.readNamespacedPod({ namespace: this.namespace, name }), 'get', 'pods', name);
  }

  listPods(labelSelector: string): Promise<V1Pod[]> {
    return this.listPodsAt(labelSelector).then((l) => l.items);
  }

  /** The pods and the list's resourceVersion, from which a watch misses nothing. */
  listPodsAt(labelSelector: string): Promise<{ items: V1Pod[]; resourceVersion?: string }> {
    return this.retried(() => this.core.listNamespacedPod({ namespace: this.namespace, labelSelector }), 'list', 'pods').then((l) => ({
      items: l.items,
      resourceVersion: l.metadata?.resourceVersion,
    }));
  }

  /** Lowers activeDeadlineSeconds so the kubelet stops the pod and keeps the object (logs, exit state). */
  async expirePod(name: string, seconds: number): Promise<void> {
    await this.retried(
      () =>
        this.core.patchNamespacedPod({
          namespace: this.namespace,
          name,
          body: [{ op: 'replace', path: '/spec/activeDeadlineSeconds', value: Math.max(1, seconds) }],
        }),
      'patch',
      'pods',
      name,
    );
  }

  /** Sets (adds or replaces) annotations on a pod. */
  async annotatePod(name: string, annotations: Record<string, string>): Promise<void> {
    const ops = annotationOps(annotations);
    await this.retried(() => this.core.patchNamespacedPod({ namespace: this.namespace, name, body: ops }), 'patch', 'pods', name);
  }

  deletePod(name: string, graceSeconds = 0): Promise<void> {
    return this.deletedQuietly(() => this.core.deleteNamespacedPod({ namespace: this.namespace, name, gracePeriodSeconds: graceSeconds }), 'pods', name);
  }

  /** Watches one pod by name; `onPod` returns true to stop. Resumes from the last resourceVersion. */
  watchPod(name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new KubeError('aborted'));
    const action = this.action('watch', 'pods', name);
    const watch = resumableWatch<V1Pod>({
      request: watchRequests(this.kc, this.podsPath),
      query: { fieldSelector: `metadata.name=${name}` },
      onEvent: (type, pod) => onPod(pod, type),
      retryAfter: (err, failures) => (isTransient(err) && failures <= WATCH_RETRIES ? backoffDelay(failures - 1, KUBE_BACKOFF) : undefined),
    });
    const onAbort = (): void => watch.stop(new KubeError('aborted'));
    signal?.addEventListener('abort', onAbort);
    return watch.done
      .catch((err: unknown) => {
        throw toKubeError(err, action);
      })
      .finally(() => signal?.removeEventListener('abort', onAbort));
  }

  /**
   * Watches every pod matching `labelSelector` as a reflector does: a list (whose pods go to `onSync`, so
   * the caller can settle what it missed), then a watch from the list's resourceVersion, resumed from the
   * last version seen after the server ends it or fails, and listed afresh when that version expired
   * (410). `onPod` sees ADDED/MODIFIED/DELETED; failures go to `onError` and never end it. Returns a stop function.
   */
  watchPods(
    labelSelector: string,
    onPod: (type: string, pod: V1Pod) => void,
    onError: (err: Error) => void,
    onSync: (pods: V1Pod[], listStartedAt: number) => void = () => undefined,
  ): () => void {
    const watch = resumableWatch<V1Pod>({
      request: watchRequests(this.kc, this.podsPath),
      query: { labelSelector },
      list: () => this.listPodsAt(labelSelector),
      onList: onSync,
      onEvent: (type, pod) => void onPod(type, pod),
      retryAfter: (err, failures) => {
        onError(err instanceof Error ? err : toKubeError(err, this.action('watch', 'pods')));
        return backoffDelay(failures, REFLECTOR_BACKOFF);
      },
      background: true,
    });
    return () => watch.stop();
  }

  // --- objects beside pods

  createConfigMap(cm: V1ConfigMap): Promise<V1ConfigMap> {
    const name = cm.metadata?.name ?? '';
    return this.created(
      cm,
      () => this.core.createNamespacedConfigMap({ namespace: this.namespace, body: cm }),
      () => this.core.readNamespacedConfigMap({ namespace: this.namespace, name }),
      'configmaps',
    );
  }

  /** A Secret (berth task's params: never written into a pod spec in clear). */
  createSecret(secret: V1Secret): Promise<V1Secret> {
    const name = secret.metadata?.name ?? '';
    return this.created(
      secret,
      () => this.core.createNamespacedSecret({ namespace: this.namespace, body: secret }),
      () => this.core.readNamespacedSecret({ namespace: this.namespace, name }),
      'secrets',
    );
  }

  deleteSecret(name: string): Promise<void> {
    return this.deletedQuietly(() => this.core.deleteNamespacedSecret({ namespace: this.namespace, name }), 'secrets', name);
  }

  createNetworkPolicy(np: V1NetworkPolicy): Promise<V1NetworkPolicy> {
    const name = np.metadata?.name ?? '';
    return this.created(
      np,
      () => this.networking.createNamespacedNetworkPolicy({ namespace: this.namespace, body: np }),
      () => this.networking.readNamespacedNetworkPolicy({ namespace: this.namespace, name }),
      'networkpolicies.networking.k8s.io',
    );
  }

  /** Sets (adds or replaces) annotations on a NetworkPolicy. */
  async annotateNetworkPolicy(name: string, annotations: Record<string, string>): Promise<void> {
    const ops = annotationOps(annotations);
    await this.retried(
      () => this.networking.patchNamespacedNetworkPolicy({ namespace: this.namespace, name, body: ops }),
      'patch',
      'networkpolicies.networking.k8s.io',
      name,
    );
  }

  deleteNetworkPolicy(name: string): Promise<void> {
    return this.deletedQuietly(
      () => this.networking.deleteNamespacedNetworkPolicy({ namespace: this.namespace, name }),
      'networkpolicies.networking.k8s.io',
      name,
    );
  }

  listNetworkPolicies(labelSelector: string): Promise<V1NetworkPolicy[]> {
    return this.retried(
      () => this.networking.listNamespacedNetworkPolicy({ namespace: this.namespace, labelSelector }),
      'list',
      'networkpolicies.networking.k8s.io',
    ).then((l) => l.items);
  }

  /** Deletes and ignores "not found": cleanup must be idempotent. */
  deleteQuietly(kind: 'pods' | 'configmaps' | 'networkpolicies', name: string): Promise<void> {
    if (kind === 'pods') return this.deletePod(name);
    if (kind === 'networkpolicies') return this.deleteNetworkPolicy(name);
    return this.deletedQuietly(() => this.core.deleteNamespacedConfigMap({ namespace: this.namespace, name }), 'configmaps', name);
  }

  createService(svc: V1Service): Promise<V1Service> {
    const name = svc.metadata?.name ?? '';
    return this.created(
      svc,
      () => this.core.createNamespacedService({ namespace: this.namespace, body: svc }),
      () => this.core.readNamespacedService({ namespace: this.namespace, name }),
      'services',
    );
  }

  deleteService(name: string): Promise<void> {
    return this.deletedQuietly(() => this.core.deleteNamespacedService({ namespace: this.namespace, name }), 'services', name);
  }

  listServices(labelSelector: string): Promise<V1Service[]> {
    return this.retried(() => this.core.listNamespacedService({ namespace: this.namespace, labelSelector }), 'list', 'services').then((l) => l.items);
  }

  createClaim(pvc: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
    const name = pvc.metadata?.name ?? '';
    return this.created(
      pvc,
      () => this.core.createNamespacedPersistentVolumeClaim({ namespace: this.namespace, body: pvc }),
      () => this.core.readNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }),
      'persistentvolumeclaims',
    );
  }

  deleteClaim(name: string): Promise<void> {
    return this.deletedQuietly(() => this.core.deleteNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }), 'persistentvolumeclaims', name);
  }

  readClaim(name: string): Promise<V1PersistentVolumeClaim> {
    return this.retried(() => this.core.readNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }), 'get', 'persistentvolumeclaims', name);
  }

  /** Sets (adds or replaces) annotations on a claim. */
  async annotateClaim(name: string, annotations: Record<string, string>): Promise<void> {
    const ops = annotationOps(annotations);
    await this.retried(
      () => this.core.patchNamespacedPersistentVolumeClaim({ namespace: this.namespace, name, body: ops }),
      'patch',
      'persistentvolumeclaims',
      name,
    );
  }

  listClaims(labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    return this.retried(
      () => this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector }),
      'list',
      'persistentvolumeclaims',
    ).then((l) => l.items);
  }

  readPodTemplate(name: string): Promise<V1PodTemplate> {
    return this.retried(() => this.core.readNamespacedPodTemplate({ namespace: this.namespace, name }), 'get', 'podtemplates', name);
  }

  // --- logs

  /** The container's log as bytes; `stream` asks for one of its streams (KEP-3288). */
  readPodLog(name: string, container: string, q?: Omit<PodLogQuery, 'follow'>): Promise<Buffer> {
    return this.retried(() => readPodLogBytes(this.kc, this.namespace, name, container, q), 'get', 'pods/log', name);
  }

  /** A log stream (follow or not), opened with retries; the caller reads and ends it. */
  openPodLog(name: string, container: string, q?: PodLogQuery): Promise<IncomingMessage> {
    return withRetry(() => openPodLog(this.kc, this.namespace, name, container, q), {
      action: this.action('get', 'pods/log', name),
      signal: q?.signal,
      clock: this.opts.clock,
    });
  }

  /** The same as openPodLog, under the name berth serve's engine calls. */
  openLog(pod: string, container: string, q: LogQuery): Promise<IncomingMessage> {
    return this.openPodLog(pod, container, q);
  }

  /**
   * Whether `pods/log` serves stdout and stderr apart (KEP-3288, `stream=`): asked once per process for
   * each server, namespace and user (a long-lived caller, the shim agent, makes a client per call).
   * Servers before 1.32 ignore the parameter (both streams would come back merged), and 1.32+ servers
   * without the PodLogsQuerySplitStreams gate refuse it with 422; so: a 1.32+ server that validates
   * the parameter and then looks for the pod (404 for a pod that does not exist).
   */
  servesSplitLogs(): Promise<boolean> {
    const key = `${this.kc.getCurrentCluster()?.server} ${this.namespace} ${this.kc.getCurrentUser()?.name}`;
    let answer = splitLogAnswers.get(key);
    if (!answer) {
      answer = (async () => {
        const v = await this.serverVersion().catch(() => undefined);
        if (!v || v.major !== 1 || v.minor < 32) return false;
        try {
          await withRetry(() => readPodLogBytes(this.kc, this.namespace, 'berth-split-log-probe-0', 'main', { stream: 'Stderr' }), { clock: this.opts.clock });
          return true;
        } catch (err) {
          return statusOf(err).code === 404;
        }
      })();
      splitLogAnswers.set(key, answer);
    }
    return answer;
  }

  // --- streams

  /**
   * Runs `command` in the pod; stdout/stderr forwarded as they come; the exit code from the Status channel.
   * An upgrade the server refused with a transient status is tried again: the command never ran then.
   * A session that drops after the upgrade is not (the command may have run): `done` rejects.
   */
  async exec(
    pod: string,
    container: string,
    command: string[],
    io: { stdin?: Readable; stdout?: Writable; stderr?: Writable; tty?: boolean },
  ): Promise<{ session: StreamSession; done: Promise<ExecOutcome> }> {
    const session = await withRetry(() => openExec(this.kc, this.namespace, pod, container, command, { ...io, requireStdinClose: Boolean(io.stdin) }), {
      action: this.action('create', 'pods/exec', pod),
      tries: 4,
      // Only an HTTP refusal proves the command did not start; a dropped connection is final.
      retryable: (err) => statusOf(err).code !== undefined,
      clock: this.opts.clock,
    });
    const done = session.done.then((r) => ({ exitCode: exitCodeOfStatus(r.status) ?? 126 }));
    return { session, done };
  }

  /** Feeds stdin only: output is read from the log, which also holds what was written before attaching. */
  attachStdin(pod: string, container: string, stdin: Readable, tty: boolean): Promise<StreamSession> {
    // stdout is asked for and dropped: with stdin alone the kubelet announces the session with an empty
    // frame on the status channel, which openAttach would try to parse as the final Status.
    const discard = new PassThrough().resume();
    return openAttach(this.kc, this.namespace, pod, container, { stdin, stdout: discard, tty, requireStdinClose: true });
  }

  /** Feeds a file receiver (runtime/file-feed.ts): its stdin, and its stderr back for the sentence of its failure. */
  attachFeed(pod: string, container: string, stdin: Readable, stderr: Writable): Promise<StreamSession> {
    return openFeedAttach(this.kc, this.namespace, pod, container, stdin, stderr);
  }

  /** One port-forward for one TCP connection, as a Duplex: the connection inside the pod. */
  forward(pod: string, port: number): Promise<Duplex> {
    return openPortForward(this.kc, this.namespace, pod, port);
  }

  // --- the server

  /** `major.minor` of the server, e.g. `{ major: 1, minor: 32 }`. */
  serverVersion(): Promise<{ major: number; minor: number }> {
    // A server's version does not change under a running process: asked once per server.
    const server = this.kc.getCurrentCluster()?.server ?? '';
    let version = serverVersions.get(server);
    if (!version) {
      version = this.retried(() => this.kc.makeApiClient(VersionApi).getCode(), 'get', 'version').then((info) => ({
        major: parseInt(info.major, 10),
        minor: parseInt(info.minor, 10),
      }));
      version.catch(() => serverVersions.delete(server));
      serverVersions.set(server, version);
    }
    return version;
  }

  /**
   * A SelfSubjectAccessReview in this namespace: true/false, or undefined when the server could not
   * answer (then the real call will tell).
   */
  async canI(verb: string, resource: string, subresource?: string, group = ''): Promise<boolean | undefined> {
    return this.reviewAccess(verb, resource, subresource, group).catch(() => undefined);
  }

  /** canI for callers that report why the server could not answer (a sentence, as every failure here). */
  async reviewAccess(verb: string, resource: string, subresource?: string, group = ''): Promise<boolean> {
    const review = await this.retried(
      () =>
        this.kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { namespace: this.namespace, verb, resource, subresource, group } },
          },
        }),
      'create',
      'selfsubjectaccessreviews.authorization.k8s.io',
    );
    return review.status?.allowed === true;
  }

  // --- the one guard and retry policy of every call above

  private action(verb: string, resource: string, name?: string): KubeAction {
    return { verb, resource, namespace: this.namespace, name, server: this.server };
  }

  /** An idempotent call, retried on transient failures, its final failure as a sentence. */
  private async retried<T>(call: () => Promise<T>, verb: string, resource: string, name?: string): Promise<T> {
    const action = this.action(verb, resource, name);
    try {
      return await withRetry(call, { action, clock: this.opts.clock });
    } catch (err) {
      throw toKubeError(err, action);
    }
  }

  /** A create of a fixed name, retried; a 409 after a lost answer is resolved by reading the object back. */
  private created<T extends { metadata?: V1ObjectMeta }>(body: T, create: () => Promise<T>, read: () => Promise<T>, resource: string): Promise<T> {
    const readBack = async (): Promise<T | undefined> => {
      const found = await read();
      return isOurs(body.metadata, found.metadata) ? found : undefined;
    };
    return createWithRetry(create, readBack, { action: this.action('create', resource, body.metadata?.name), clock: this.opts.clock });
  }

  /** A delete, retried; 404 is success (also when an earlier try's answer was lost). */
  private async deletedQuietly(call: () => Promise<unknown>, resource: string, name: string): Promise<void> {
    const action = this.action('delete', resource, name);
    try {
      await withRetry(call, { action, clock: this.opts.clock });
    } catch (err) {
      if (statusOf(err).code === 404) return;
      throw toKubeError(err, action);
    }
  }
}

/** A JSON patch that sets each annotation (the object has annotations: berth's always carry an expiry). */
function annotationOps(annotations: Record<string, string>): Array<{ op: 'add'; path: string; value: string }> {
  return Object.entries(annotations).map(([k, value]) => ({ op: 'add', path: `/metadata/annotations/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }));
}

/**
 * The object found under our name is the one we sent: it carries every label (at least one: berth's
 * objects always have some) and every annotation we gave it, and it is not being deleted.
 */
export function isOurs(sent: V1ObjectMeta | undefined, found: V1ObjectMeta | undefined): boolean {
  if (!sent || !found || found.deletionTimestamp || Object.keys(sent.labels ?? {}).length === 0) return false;
  const same = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean =>
    Object.entries(a ?? {}).every(([k, v]) => b?.[k] === v);
  return same(sent.labels, found.labels) && same(sent.annotations, found.annotations);
}
