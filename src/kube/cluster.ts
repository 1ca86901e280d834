/**
 * The one place berth's runtime reaches the cluster: typed calls whose failures are already
 * sentences (KubeError), transient failures (429, 5xx, dropped connections) retried on every call
 * that may be repeated, and a pod watch that resumes when the server ends it or fails for a moment.
 */
import { AuthorizationV1Api, CoreV1Api, NetworkingV1Api, VersionApi, Watch, type KubeConfig, type V1ConfigMap, type V1NetworkPolicy, type V1ObjectMeta, type V1Pod, type V1PodTemplate } from '@kubernetes/client-node';
import { resolveKubeConfig, type ResolveOptions } from './config.js';
import { KubeError, statusOf, toKubeError } from './errors.js';
import type { IncomingMessage } from 'node:http';
import { openPodLog, readPodLogBytes, type PodLogQuery } from './pod-log.js';
import { isTransient, withRetry } from './retry.js';

export interface KubeCluster {
  kc: KubeConfig;
  namespace: string;
  server: string;
  createPod(pod: V1Pod): Promise<V1Pod>;
  createConfigMap(cm: V1ConfigMap): Promise<V1ConfigMap>;
  createNetworkPolicy(np: V1NetworkPolicy): Promise<V1NetworkPolicy>;
  /** Deletes and ignores "not found": cleanup must be idempotent. */
  deleteQuietly(kind: 'pods' | 'configmaps' | 'networkpolicies', name: string): Promise<void>;
  /** The container's log as bytes; `stream` asks for one of its streams (KEP-3288). */
  readPodLog(name: string, container: string, q?: Omit<PodLogQuery, 'follow'>): Promise<Buffer>;
  /** A log stream (follow or not), opened with retries; the caller reads and ends it. */
  openPodLog(name: string, container: string, q?: PodLogQuery): Promise<IncomingMessage>;
  /**
   * Whether `pods/log` serves stdout and stderr apart (KEP-3288, `stream=`): asked once per cluster.
   * Servers before 1.32 ignore the parameter (both streams would come back merged), and 1.32+ servers
   * without the PodLogsQuerySplitStreams gate refuse it with 422; so: a 1.32+ server that validates
   * the parameter and then looks for the pod (404 for a pod that does not exist).
   */
  servesSplitLogs(): Promise<boolean>;
  readPodTemplate(name: string): Promise<V1PodTemplate>;
  /** Watches one pod by name; `onPod` returns true to stop. Resumes from the last resourceVersion. */
  watchPod(name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void>;
  /** `major.minor` of the server, e.g. `{ major: 1, minor: 32 }`. */
  serverVersion(): Promise<{ major: number; minor: number }>;
  /**
   * A SelfSubjectAccessReview in this namespace: true/false, or undefined when the server could not
   * answer (then the real call will tell).
   */
  canI(verb: string, resource: string, subresource?: string, group?: string): Promise<boolean | undefined>;
}

export function connectCluster(opts: ResolveOptions = {}): KubeCluster {
  const target = resolveKubeConfig(opts);
  return clusterFromConfig(target.kc, target.namespace);
}

export function clusterFromConfig(kc: KubeConfig, namespace: string): KubeCluster {
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const server = kc.getCurrentCluster()?.server ?? '';
  const act = (verb: string, resource: string, name?: string) => ({ verb, resource, namespace, name, server });
  const guard = async <T>(p: Promise<T>, verb: string, resource: string, name?: string): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      throw toKubeError(err, act(verb, resource, name));
    }
  };
  /** Idempotent calls: repeated while the failure is transient. */
  const retried = <T>(call: () => Promise<T>, verb: string, resource: string, name?: string): Promise<T> => guard(withRetry(call), verb, resource, name);
  /**
   * Creates of a fixed name: a create whose answer was lost may have landed, so a 409 on a later try
   * reads the object back and takes it when it carries every label this create set (the run label is
   * unique to one run).
   */
  const created = <T extends { metadata?: V1ObjectMeta }>(body: T, create: () => Promise<T>, read: () => Promise<T>, resource: string): Promise<T> =>
    guard(
      withRetry(create, {
        onConflict: async () => {
          const found = await read();
          const want = body.metadata?.labels ?? {};
          const have = found.metadata?.labels ?? {};
          return Object.keys(want).length > 0 && Object.entries(want).every(([k, v]) => have[k] === v) ? found : undefined;
        },
      }),
      'create',
      resource,
      body.metadata?.name,
    );

  let splitLogs: Promise<boolean> | undefined;
  const probeSplitLogs = async (): Promise<boolean> => {
    const info = await withRetry(() => kc.makeApiClient(VersionApi).getCode()).catch(() => undefined);
    if (!info || parseInt(info.major, 10) !== 1 || parseInt(info.minor, 10) < 32) return false;
    try {
      await withRetry(() => readPodLogBytes(kc, namespace, 'berth-split-log-probe-0', 'main', { stream: 'Stderr' }));
      return true;
    } catch (err) {
      return statusOf(err).code === 404;
    }
  };

  return {
    kc,
    namespace,
    server,
    createPod: (pod) =>
      created(pod, () => core.createNamespacedPod({ namespace, body: pod }), () => core.readNamespacedPod({ namespace, name: pod.metadata?.name as string }), 'pods'),
    createConfigMap: (cm) =>
      created(cm, () => core.createNamespacedConfigMap({ namespace, body: cm }), () => core.readNamespacedConfigMap({ namespace, name: cm.metadata?.name as string }), 'configmaps'),
    createNetworkPolicy: (np) =>
      created(
        np,
        () => net.createNamespacedNetworkPolicy({ namespace, body: np }),
        () => net.readNamespacedNetworkPolicy({ namespace, name: np.metadata?.name as string }),
        'networkpolicies.networking.k8s.io',
      ),
    async deleteQuietly(kind, name) {
      try {
        await withRetry(async () => {
          if (kind === 'pods') await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
          else if (kind === 'configmaps') await core.deleteNamespacedConfigMap({ namespace, name });
          else await net.deleteNamespacedNetworkPolicy({ namespace, name });
        });
      } catch (err) {
        if (statusOf(err).code === 404) return;
        throw toKubeError(err, act('delete', kind === 'networkpolicies' ? 'networkpolicies.networking.k8s.io' : kind, name));
      }
    },
    readPodLog: (name, container, q) => retried(() => readPodLogBytes(kc, namespace, name, container, q), 'get', 'pods/log', name),
    openPodLog: (name, container, q) => withRetry(() => openPodLog(kc, namespace, name, container, q)),
    servesSplitLogs: () => (splitLogs ??= probeSplitLogs()),
    readPodTemplate: (name) => retried(() => core.readNamespacedPodTemplate({ namespace, name }), 'get', 'podtemplates', name),
    watchPod: (name, onPod, signal) => watchOnePod(kc, namespace, name, onPod, signal, server),
    async serverVersion() {
      const info = await retried(() => kc.makeApiClient(VersionApi).getCode(), 'get', 'version');
      return { major: parseInt(info.major, 10), minor: parseInt(info.minor, 10) };
    },
    async canI(verb, resource, subresource, group = '') {
      try {
        const review = await withRetry(() =>
          kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
            body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace, verb, resource, subresource, group } } },
          }),
        );
        return review.status?.allowed === true;
      } catch {
        return undefined;
      }
    },
  };
}

/** Consecutive transient failures a watch rides out (with backoff) before it gives up. */
const WATCH_RETRIES = 10;

function watchOnePod(
  kc: KubeConfig,
  namespace: string,
  name: string,
  onPod: (pod: V1Pod, type: string) => boolean,
  signal: AbortSignal | undefined,
  server: string,
): Promise<void> {
  const watch = new Watch(kc);
  const action = { verb: 'watch', resource: 'pods', namespace, name, server };
  let resourceVersion: string | undefined;
  let failures = 0;
  return new Promise<void>((resolve, reject) => {
    let finished = false;
    let controller: AbortController | undefined;
    let retryTimer: NodeJS.Timeout | undefined;
    const finish = (err?: Error): void => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      controller?.abort();
      clearTimeout(retryTimer);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(new KubeError('aborted'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    /** A transient failure is ridden out with backoff; anything else, or too many in a row, ends the watch. */
    // Each connection has a generation: callbacks of a connection given up on are ignored.
    let generation = 0;
    const failed = (gen: number, err: unknown): void => {
      if (finished || gen !== generation) return;
      generation++;
      controller?.abort();
      if (!isTransient(err) || ++failures > WATCH_RETRIES) {
        finish(toKubeError(err, action));
        return;
      }
      retryTimer = setTimeout(start, Math.min(2000, 100 * 2 ** (failures - 1)));
    };
    const start = (): void => {
      if (finished) return;
      const gen = ++generation;
      const query: Record<string, string | boolean> = { fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: true };
      if (resourceVersion) query.resourceVersion = resourceVersion;
      watch
        .watch(
          `/api/v1/namespaces/${namespace}/pods`,
          query,
          (type, obj: V1Pod & { code?: number }) => {
            if (finished || gen !== generation) return;
            if (type === 'ERROR') {
              // 410: our resourceVersion is too old; start over from the current state.
              if (obj.code === 410) resourceVersion = undefined;
              else failed(gen, toKubeError({ code: obj.code, body: obj }, action));
              return;
            }
            failures = 0;
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
            if (type === 'BOOKMARK') return;
            if (onPod(obj, type)) finish();
          },
          (err: unknown) => {
            if (finished || gen !== generation) return;
            if (err && (err as { name?: string }).name !== 'AbortError') {
              failed(gen, err);
              return;
            }
            // The server ended the watch (timeouts are normal): resume where we were.
            start();
          },
        )
        .then((c) => {
          if (gen === generation) controller = c;
          if (finished || gen !== generation) c.abort();
        })
        .catch((err: unknown) => failed(gen, err));
    };
    start();
  });
}
