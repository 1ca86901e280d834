/**
 * A create request completed from the image's config, the way dockerd does it, so that inspect,
 * `-P`, the healthcheck runner and the pod all see the container dockerd would have made.
 */
import type { ImageConfig } from './image-config.js';
import { asArgv, type CreateBody } from '../model.js';

/**
 * ExposedPorts: the image's and the body's together. Env: the body's, then the image's variables the
 * body does not set. Labels: the image's, the body's winning. Healthcheck: the image's unless the body
 * sets one (zero fields of the body's are taken from the image; `NONE` disables). User, WorkingDir:
 * the body's when given. Cmd and Entrypoint: the image's only when the body names no Entrypoint (a new
 * entrypoint drops the image's CMD, as on dockerd).
 */
export function mergeImageConfig(body: CreateBody, image: ImageConfig | undefined): CreateBody {
  // `-e VAR` with VAR unset where the CLI runs comes as a bare `VAR`: dockerd's ReplaceOrAppendEnvValues takes it
  // as "unset VAR", which removes the image's value and sets nothing
  const set = body.Env?.filter((e) => e.includes('='));
  if (!image) return set && set.length !== body.Env!.length ? { ...body, Env: set } : body;
  const out: CreateBody = { ...body };
  if (!out.User && image.User) out.User = image.User;
  if (!out.WorkingDir && image.WorkingDir) out.WorkingDir = image.WorkingDir;
  if (!out.StopSignal && image.StopSignal) out.StopSignal = image.StopSignal;
  const exposed = { ...(image.ExposedPorts ?? {}), ...(body.ExposedPorts ?? {}) };
  if (Object.keys(exposed).length) out.ExposedPorts = exposed;
  const env = body.Env ?? [];
  const keys = new Set(env.map(envKey));
  const fromImage = (image.Env ?? []).filter((e) => !keys.has(envKey(e)));
  if (env.length || fromImage.length) out.Env = [...(set ?? []), ...fromImage];
  if (image.Labels && Object.keys(image.Labels).length) out.Labels = { ...image.Labels, ...(body.Labels ?? {}) };
  const entrypoint = asArgv(body.Entrypoint);
  if (entrypoint.length === 0) {
    if (asArgv(body.Cmd).length === 0 && image.Cmd?.length) out.Cmd = [...image.Cmd];
    if ((body.Entrypoint === undefined || body.Entrypoint === null) && image.Entrypoint?.length) out.Entrypoint = [...image.Entrypoint];
  }
  if (image.Healthcheck) out.Healthcheck = mergeHealthcheck(body.Healthcheck, image.Healthcheck);
  return out;
}

function mergeHealthcheck(mine: CreateBody['Healthcheck'], image: NonNullable<ImageConfig['Healthcheck']>): CreateBody['Healthcheck'] {
  if (!mine) return { ...image };
  return {
    ...mine,
    Test: mine.Test?.length ? mine.Test : image.Test,
    Interval: mine.Interval || image.Interval,
    Timeout: mine.Timeout || image.Timeout,
    Retries: mine.Retries || image.Retries,
    StartPeriod: mine.StartPeriod || image.StartPeriod,
  };
}

/** The user a pod can be given: a numeric image user goes to the pod; a named one is left to the kubelet, which runs the image's user anyway. */
export function podUser(user: string | undefined): string | undefined {
  return user && /^\d+(:\d+)?$/.test(user) ? user : undefined;
}

function envKey(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? entry : entry.slice(0, eq);
}
