/**
 * Files into a pod: the planned tar (mounts too large for a ConfigMap, and stdin when it goes as a
 * file) streamed into the init container that unpacks them, ending with the marker the container checks.
 */
import { PassThrough, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import type { KubeCluster } from '../kube/cluster.js';
import { openAttach } from '../kube/streams.js';
import { paddedTarStream } from './files.js';
import { FILES_COMPLETE_MARKER, type TarEntry, type WorkloadPlan } from './plan.js';
import { viewContainer } from './pod-status.js';
import { isTerminal, settledOrRunning, type PodTracker } from './pod-tracker.js';
import { RunError } from './run-error.js';

/** Streams the planned tar (mount files, and stdin when it goes as a file) into the init container. */
export async function feedInitContainer(
  plan: WorkloadPlan,
  stdin: Readable | undefined,
  kube: KubeCluster,
  tracker: PodTracker,
  deadline: number,
  stdinAsFile: boolean,
  progress: (p: string) => void,
): Promise<void> {
  const name = plan.mountData.initContainer as string;
  const pod = await tracker.until((p) => settledOrRunning(viewContainer(p, name, true), progress), deadline, `the file copy container did not start`);
  const view = viewContainer(pod, name, true);
  if (view.state === 'failed')
    throw new RunError(
      `${view.message} (the helper image ${plan.pod.spec?.initContainers?.[0]?.image ?? ''} copies mounted files into the pod: set BERTH_HELPER_IMAGE to an image with sh and tar that the cluster can pull)`,
      125,
    );
  if (view.state !== 'running') return;
  progress('copying files');
  const entries: TarEntry[] = [...plan.mountData.entries];
  if (stdinAsFile && plan.mountData.stdinEntry) {
    entries.push({ name: plan.mountData.stdinEntry, type: 'file', mode: 0o444, data: stdin ? await buffer(stdin) : Buffer.alloc(0) });
  }
  entries.push({ name: FILES_COMPLETE_MARKER, type: 'file', mode: 0o444, data: Buffer.alloc(0) });
  const tar = tarStream(entries);
  const errors = new PassThrough();
  const errText: Buffer[] = [];
  errors.on('data', (c: Buffer) => errText.push(c));
  const session = await openAttach(kube.kc, kube.namespace, plan.pod.metadata?.name as string, name, { stdin: tar, stderr: errors });
  // tar stops at its end-of-archive marker, so the copy also ends without a v5 stdin close.
  await session.done.catch(() => undefined);
  const done = await tracker.until((p) => isTerminal(viewContainer(p, name, true)), deadline + 60_000, 'the file copy did not finish');
  const end = viewContainer(done, name, true);
  if (end.state === 'terminated' && end.exitCode !== 0) {
    throw new RunError(
      `copying mounted files into the pod failed (tar exit ${end.exitCode}): ${Buffer.concat(errText).toString('utf8').trim() || end.message || ''}`,
    );
  }
  if (end.state === 'failed') throw new RunError(end.message, 125);
}

/** GNU tar reads whole 10 KiB records: pad so it reaches the end marker without waiting for EOF. */
function tarStream(entries: TarEntry[]): Readable {
  const p = pack();
  for (const e of entries) {
    if (e.type === 'file') p.entry({ name: e.name, type: 'file', mode: e.mode, size: e.data?.length ?? 0 }, e.data ?? Buffer.alloc(0));
    else if (e.type === 'directory') p.entry({ name: e.name, type: 'directory', mode: e.mode });
    else p.entry({ name: e.name, type: 'symlink', linkname: e.linkname ?? '' });
  }
  p.finalize();
  return paddedTarStream(p);
}
