/** Operations a pod cannot do (build, commit, export, stats, pause, image load/push): 501, saying why. */
import type { Router } from '../http.js';

/** Said where a client asks berth to build (its build stream's error line). */
export const CANNOT_BUILD =
  'berth serve cannot build images: its containers are Kubernetes pods and it has no image builder. Build the image elsewhere (docker build or podman build on a machine with an engine, kaniko or buildah in the cluster), push it to a registry the cluster pulls from, and use it by name';

const NOT_SERVED: Array<[string, string, string | RegExp]> = [
  ['ImageCommit', 'POST', '/commit'],
  ['ImageLoad', 'POST', '/images/load'],
  ['ImageGetAll', 'GET', '/images/get'],
  ['ImagePush', 'POST', /^\/images\/(.+)\/push$/],
  ['ContainerStats', 'GET', '/containers/{id}/stats'],
  ['ContainerExport', 'GET', '/containers/{id}/export'],
  ['ContainerChanges', 'GET', '/containers/{id}/changes'],
  ['ContainerUpdate', 'POST', '/containers/{id}/update'],
  ['ContainerPause', 'POST', '/containers/{id}/pause'],
  ['ContainerUnpause', 'POST', '/containers/{id}/unpause'],
];

export function unsupportedRoutes(r: Router): void {
  // As dockerd reports a failed build: a 200 whose JSON-lines stream ends with an error line. Clients
  // (dockerode's followProgress, testcontainers) wait for the stream's end and fail with the message; the
  // build context is read and dropped so the client can finish sending it.
  r.op('ImageBuild', 'POST', '/build', (call) => call.send(200, `${JSON.stringify({ errorDetail: { message: CANNOT_BUILD }, error: CANNOT_BUILD })}\n`, { 'Content-Type': 'application/json' }));
  for (const [operation, method, pattern] of NOT_SERVED) {
    r.op(operation, method, pattern, (call) => call.send(501, { message: `${call.method} ${call.path} is not implemented by berth serve: containers are Kubernetes pods` }));
  }
}
