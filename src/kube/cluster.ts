/**
 * The one place berth's runtime reaches the cluster: typed calls whose failures are already
 * sentences (KubeError), and a pod watch that resumes when the server ends it.
 */
import { AuthorizationV1Api, CoreV1Api, NetworkingV1Api, VersionApi, Watch, type KubeConfig, type V1ConfigMap, type V1NetworkPolicy, type V1Pod, type V1PodTemplate } from '@kubernetes/client-node';
import { resolveKubeConfig, type ResolveOptions } from './config.js';
import { KubeError, statusOf, toKubeError } from './errors.js';

export interface KubeCluster {
  kc: KubeConfig;
  namespace: string;
  server: string;
  createPod(pod: V1Pod): Promise<V1Pod>;
  createConfigMap(cm: V1ConfigMap): Promise<V1ConfigMap>;
  createNetworkPolicy(np: V1NetworkPolicy): Promise<V1NetworkPolicy>;
  /** Deletes and ignores "not found": cleanup must be idempotent. */
  deleteQuietly(kind: 'pods' | 'configmaps' | 'networkpolicies', name: string): Promise<void>;
  readPodLog(name: string, container: string): Promise<string>;
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

  return {
    kc,
    namespace,
    server,
    createPod: (pod) => guard(core.createNamespacedPod({ namespace, body: pod }), 'create', 'pods', pod.metadata?.name),
    createConfigMap: (cm) => guard(core.createNamespacedConfigMap({ namespace, body: cm }), 'create', 'configmaps', cm.metadata?.name),
    createNetworkPolicy: (np) => guard(net.createNamespacedNetworkPolicy({ namespace, body: np }), 'create', 'networkpolicies.networking.k8s.io', np.metadata?.name),
    async deleteQuietly(kind, name) {
      try {
        if (kind === 'pods') await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
        else if (kind === 'configmaps') await core.deleteNamespacedConfigMap({ namespace, name });
        else await net.deleteNamespacedNetworkPolicy({ namespace, name });
      } catch (err) {
        if (statusOf(err).code === 404) return;
        throw toKubeError(err, act('delete', kind, name));
      }
    },
    readPodLog: (name, container) => guard(core.readNamespacedPodLog({ namespace, name, container }), 'get', 'pods/log', name),
    readPodTemplate: (name) => guard(core.readNamespacedPodTemplate({ namespace, name }), 'get', 'podtemplates', name),
    watchPod: (name, onPod, signal) => watchOnePod(kc, namespace, name, onPod, signal, server),
    async serverVersion() {
      const info = await guard(kc.makeApiClient(VersionApi).getCode(), 'get', 'version');
      return { major: parseInt(info.major, 10), minor: parseInt(info.minor, 10) };
    },
    async canI(verb, resource, subresource, group = '') {
      try {
        const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace, verb, resource, subresource, group } } },
        });
        return review.status?.allowed === true;
      } catch {
        return undefined;
      }
    },
  };
}

function watchOnePod(
  kc: KubeConfig,
  namespace: string,
  name: string,
  onPod: (pod: V1Pod, type: string) => boolean,
  signal: AbortSignal | undefined,
  server: string,
): Promise<void> {
  const watch = new Watch(kc);
  let resourceVersion: string | undefined;
  return new Promise<void>((resolve, reject) => {
    let finished = false;
    let controller: AbortController | undefined;
    const finish = (err?: Error): void => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      controller?.abort();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(new KubeError('aborted'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    const start = (): void => {
      const query: Record<string, string | boolean> = { fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: true };
      if (resourceVersion) query.resourceVersion = resourceVersion;
      watch
        .watch(
          `/api/v1/namespaces/${namespace}/pods`,
          query,
          (type, obj: V1Pod & { code?: number }) => {
            if (finished) return;
            if (type === 'ERROR') {
              // 410: our resourceVersion is too old; start over from the current state.
              if (obj.code === 410) resourceVersion = undefined;
              else finish(toKubeError({ code: obj.code, body: obj }, { verb: 'watch', resource: 'pods', namespace, name, server }));
              return;
            }
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
            if (type === 'BOOKMARK') return;
            if (onPod(obj, type)) finish();
          },
          (err: unknown) => {
            if (finished) return;
            if (err && (err as { name?: string }).name !== 'AbortError') {
              finish(toKubeError(err, { verb: 'watch', resource: 'pods', namespace, name, server }));
              return;
            }
            // The server ended the watch (timeouts are normal): resume where we were.
            start();
          },
        )
        .then((c) => {
          controller = c;
          if (finished) c.abort();
        })
        .catch((err: unknown) => finish(toKubeError(err, { verb: 'watch', resource: 'pods', namespace, name, server })));
    };
    start();
  });
}
