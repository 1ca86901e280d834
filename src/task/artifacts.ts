/**
 * Artifacts of a plan: how an output of one step becomes an input of the next, in one of two modes.
 *
 * - `direct` (the default): the producing pod stays up after its task ended and serves its outputs on
 *   its pod IP (the `outputs` container, see artifact-stream.ts); the consuming pod's `inputs` container
 *   fetches them itself. The bytes go pod to pod; berth only tells the consumer where to look.
 * - `through-berth`: berth reads each output from the producing pod (exec `tar -c`), holds it in
 *   memory, and streams it into the consuming pod's `inputs` container (attach), as `-i`/`-o` do.
 *
 * Both keep nothing on a disk outside the pods and pin no step to a node. docs/task.md says why direct is
 * the default (measured by bench/task.ts).
 */
import { TaskUsageError } from './layout.js';

export type ArtifactMode = 'direct' | 'through-berth';
export const ARTIFACT_MODES: readonly ArtifactMode[] = ['direct', 'through-berth'];
export const DEFAULT_ARTIFACT_MODE: ArtifactMode = 'direct';
export const ARTIFACTS_ENV = 'BERTH_TASK_ARTIFACTS';

/** `--artifacts` over BERTH_TASK_ARTIFACTS over the default. */
export function artifactMode(flag: string | undefined, env: NodeJS.ProcessEnv): ArtifactMode {
  const [value, from] = flag !== undefined ? [flag, '--artifacts'] : env[ARTIFACTS_ENV] ? [env[ARTIFACTS_ENV], ARTIFACTS_ENV] : [DEFAULT_ARTIFACT_MODE, ''];
  if (!ARTIFACT_MODES.includes(value as ArtifactMode)) throw new TaskUsageError(`${from} ${value}: expected one of ${ARTIFACT_MODES.join(', ')}`);
  return value as ArtifactMode;
}

/** An output served by the pod that produced it (direct mode). */
export interface PodArtifact {
  /** The producing pod, its IP, and the port and token of its artifact server. */
  pod: string;
  ip: string;
  port: number;
  token: string;
  /** The output's name in the producing task (what the consumer asks the server for). */
  output: string;
  /** The output's path below the producer's working directory (the archive's top folder). */
  path: string;
  /** The output as a tar, read through berth (exec), for -o folders and `file:` lookups; an abort stops the read. */
  read(signal?: AbortSignal): Promise<Buffer>;
}

/** An artifact: a local folder (-i), an output read into berth's memory, or an output its pod serves. */
export type Artifact = { dir: string } | { tar: Buffer } | { pod: PodArtifact };

/** The artifact's content as a tar in memory (for -o at the end and for `file: ARTIFACT/...`). */
export async function artifactTar(a: { tar: Buffer } | { pod: PodArtifact }, signal?: AbortSignal): Promise<Buffer> {
  return 'tar' in a ? a.tar : a.pod.read(signal);
}
