/**
 * The Docker Engine API of berth serve, one module per API family (routes/*.ts); each handler is
 * registered under the operationId of the Docker Engine API spec it serves. The wire details clients
 * depend on (headers sent at once on wait/logs/events/pulls, multiplexed frames, hijacked attach and
 * exec, empty PUT body) live with the handlers.
 */
import { ArchiveError } from '../runtime/files.js';
import { SandboxPlanError } from '../runtime/sandbox-plan.js';
import { PodTemplateError } from '../runtime/pod-template.js';
import { KubeError } from '../kube/errors.js';
import { FilterError } from './filters/filters.js';
import { DockerError, Router, badRequest } from './http/http.js';
import type { Engine } from './engine.js';
import { systemRoutes, type SystemInfo } from './routes/system.js';
import { imageRoutes } from './routes/images.js';
import { containerRoutes } from './routes/containers.js';
import { containerStreamRoutes } from './routes/container-streams.js';
import { archiveRoutes } from './routes/archive.js';
import { execRoutes } from './routes/exec.js';
import { networkRoutes } from './routes/networks.js';
import { volumeRoutes } from './routes/volumes.js';
import { unsupportedRoutes } from './routes/unsupported.js';

export function dockerRoutes(engine: Engine, info: SystemInfo): Router {
  const r = new Router();
  systemRoutes(r, engine, info);
  imageRoutes(r, engine);
  containerRoutes(r, engine);
  containerStreamRoutes(r, engine);
  archiveRoutes(r, engine);
  execRoutes(r, engine);
  networkRoutes(r, engine);
  volumeRoutes(r, engine);
  unsupportedRoutes(r);
  return r;
}

/** Turns known error kinds into Docker statuses. */
export function toDockerError(err: unknown): DockerError {
  if (err instanceof DockerError) return err;
  if (err instanceof FilterError) return badRequest(err.message);
  if (err instanceof ArchiveError) return new DockerError(err.status, err.message);
  if (err instanceof SandboxPlanError || err instanceof PodTemplateError) return badRequest(err.message);
  if (err instanceof KubeError) return new DockerError(500, err.message);
  return new DockerError(500, (err as Error)?.message ?? String(err));
}
