/** Operations a pod cannot do (build, export, stats, pause, image load/save/push/history/search, distribution, df, login): 501, saying why. */
import type { Router } from '../http/http.js';

/** Said where a client asks berth to build (its build stream's error line). */
export const CANNOT_BUILD =
  'berth serve cannot build images: its containers are Kubernetes pods and it has no image builder. Build the image elsewhere (docker build or podman build on a machine with an engine, kaniko or buildah in the cluster), push it to a registry the cluster pulls from, and use it by name';

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
  // As dockerd reports a failed build: a 200 whose JSON-lines stream ends with an error line. Clients
  // (dockerode's followProgress, testcontainers) wait for the stream's end and fail with the message; the
  // build context is read and dropped so the client can finish sending it.
  r.op('ImageBuild', 'POST', '/build', (call) =>
    call.send(200, `${JSON.stringify({ errorDetail: { message: CANNOT_BUILD }, error: CANNOT_BUILD })}\n`, { 'Content-Type': 'application/json' }),
  );
  // No builder, so no build cache: pruning it prunes nothing (`docker system prune` asks last).
  r.op('BuildPrune', 'POST', '/build/prune', (call) => call.send(200, { CachesDeleted: [], SpaceReclaimed: 0 }));
  for (const [operation, method, pattern, why] of NOT_SERVED) {
    r.op(operation, method, pattern, (call) => call.send(501, { message: `${call.method} ${call.path} is not implemented by berth serve: ${why}` }));
  }
}
