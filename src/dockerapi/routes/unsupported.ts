/** Operations a pod cannot do (build, commit, export, stats, pause, image load/push): 501, saying why. */
import type { Router } from '../http.js';

const NOT_SERVED: Array<[string, string, string | RegExp]> = [
  ['ImageBuild', 'POST', '/build'],
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
  for (const [operation, method, pattern] of NOT_SERVED) {
    r.op(operation, method, pattern, (call) => call.send(501, { message: `${call.method} ${call.path} is not implemented by berth serve: containers are Kubernetes pods` }));
  }
}
