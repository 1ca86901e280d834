/** Operations a pod cannot do (export, stats, pause, image load/save/push/history/search, distribution, df, login): 501, saying why. */
import type { Router } from '../http/http.js';

const PODS = 'containers are Kubernetes pods';

/** operation, method, path, and why berth serve cannot answer it */
const NOT_SERVED: Array<[string, string, string | RegExp, string]> = [
  ['ImageLoad', 'POST', '/images/load', PODS],
  ['ImageGetAll', 'GET', '/images/get', PODS],
  ['ImagePush', 'POST', /^\/images\/(.+)\/push$/, PODS],
  [
    'ImageGet',
    'GET',
    /^\/images\/(.+)\/get$/,
    'berth keeps no image layers (the kubelet pulls images); copy the image from its registry instead, e.g. with crane pull or skopeo copy',
  ],
  ['ImageSearch', 'GET', '/images/search', 'berth serve searches no registry; search the registry itself (its web page or API)'],
  [
    'DistributionInspect',
    'GET',
    /^\/distribution\/(.+)\/json$/,
    "berth serve asks registries only for image configs, as a pull needs them; read an image's digest and platforms from its registry, e.g. with crane digest or skopeo inspect",
  ],
  [
    'ImageHistory',
    'GET',
    /^\/images\/(.+)\/history$/,
    'berth keeps no image layers (the kubelet pulls images); read the history from the registry, e.g. with crane config or skopeo inspect',
  ],
  ['ContainerStats', 'GET', '/containers/{id}/stats', `${PODS} (kubectl top pod shows their use where the cluster runs metrics-server)`],
  ['ContainerExport', 'GET', '/containers/{id}/export', PODS],
  ['ContainerChanges', 'GET', '/containers/{id}/changes', PODS],
  ['ContainerUpdate', 'POST', '/containers/{id}/update', PODS],
  ['ContainerPause', 'POST', '/containers/{id}/pause', PODS],
  ['ContainerUnpause', 'POST', '/containers/{id}/unpause', PODS],
  ['SystemDataUsage', 'GET', '/system/df', `${PODS}, and the disk they use is the nodes'`],
  [
    'SystemAuth',
    'POST',
    '/auth',
    "berth serve uses no registry credentials: the kubelet pulls images; give the cluster an imagePullSecret (the pod template's imagePullSecrets, or the service account's)",
  ],
];

export function unsupportedRoutes(r: Router): void {
  // Each build runs in a fresh builder pod, so there is no build cache: pruning it prunes nothing (`docker system prune` asks last).
  r.op('BuildPrune', 'POST', '/build/prune', (call) => call.send(200, { CachesDeleted: [], SpaceReclaimed: 0 }));
  for (const [operation, method, pattern, why] of NOT_SERVED) {
    r.op(operation, method, pattern, (call) => call.send(501, { message: `${call.method} ${call.path} is not implemented by berth serve: ${why}` }));
  }
}
