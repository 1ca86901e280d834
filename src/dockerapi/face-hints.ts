/**
 * berth serve's own words in cluster failures: its namespace flag and its Role file, never the docker
 * shim's (`BERTH_NAMESPACE`, shim-role.yaml). Every call of the engine's cluster that fails with a
 * KubeError is told again with these hints (the failure itself is unchanged).
 */
import { KubeError, rehintKubeError, type FaceHints } from '../kube/errors.js';
import type { ServeCluster } from './cluster.js';

export const SERVE_HINTS: FaceHints = { namespaceSetting: '--namespace (-n)', roleFile: 'deploy/rbac/serve-role.yaml' };

/** `cluster` whose failures (rejected calls and watch errors) name `hints`. */
export function withFaceHints<C extends ServeCluster>(cluster: C, hints: FaceHints = SERVE_HINTS): C {
  const tell = <E>(err: E): E | KubeError => (err instanceof KubeError ? rehintKubeError(err, hints) : err);
  return new Proxy(cluster, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'watchPods') {
        const watch = value as ServeCluster['watchPods'];
        return (
          selector: string,
          onPod: Parameters<ServeCluster['watchPods']>[1],
          onError: (err: Error) => void,
          onSync?: Parameters<ServeCluster['watchPods']>[3],
        ) => watch.call(target, selector, onPod, (err) => onError(tell(err)), onSync);
      }
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(tell(err))) : result;
      };
    },
  });
}
