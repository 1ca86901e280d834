/**
 * A run's files through the file feed (file-feed.ts): the mounts too large for a ConfigMap, and stdin when it goes
 * as a file (clusters whose attach cannot end stdin), into the receiver plan.ts planned. The docker shim's and
 * berth fn's runs (run.ts) call it once their pod exists.
 */
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { KubeCluster } from '../kube/cluster.js';
import { openFeedAttach } from '../kube/streams.js';
import { lastLogLines } from './log-tail.js';
import { FEED_END_GRACE_MS, sendFeed } from './file-feed.js';
import type { AddEntry } from './feed-tar.js';
import type { TarEntry, WorkloadPlan } from './plan.js';
import { viewContainer } from './pod-status.js';
import { isTerminal, settledOrRunning, type PodTracker } from './pod-tracker.js';
import { RunError } from './run-error.js';

export interface MountFeed {
  plan: WorkloadPlan;
  /** The caller's stdin, read whole into the archive when `stdinAsFile`. */
  stdin: Readable | undefined;
  stdinAsFile: boolean;
  kube: KubeCluster;
  tracker: PodTracker;
  /** The start deadline (ms): the receiver runs by then, and has FEED_END_GRACE_MS more to unpack. */
  deadline: number;
  progress: (phase: string) => void;
}

/** Feeds the run's receiver; fails the run (docker's 125 where the helper could not run) when the files did not all arrive. */
export async function feedMounts(m: MountFeed): Promise<void> {
  const { plan, tracker } = m;
  const feed = plan.mountData.feed;
  if (!feed) return;
  const name = feed.container;
  const pod = await tracker.until((p) => settledOrRunning(viewContainer(p, name, true), m.progress), m.deadline, `the file copy container did not start`);
  const view = viewContainer(pod, name, true);
  if (view.state === 'failed')
    throw new RunError(
      `${view.message} (the helper image ${plan.pod.spec?.initContainers?.find((c) => c.name === name)?.image ?? ''} copies mounted files into the pod: set BERTH_HELPER_IMAGE to an image with sh and tar that the cluster can pull)`,
      125,
    );
  if (view.state !== 'running') return;
  m.progress('copying files');
  const podName = plan.pod.metadata?.name as string;
  const result = await sendFeed({
    cluster: { attachFeed: (p, c, stdin, stderr) => openFeedAttach(m.kube.kc, m.kube.namespace, p, c, stdin, stderr) },
    pod: podName,
    plan: feed,
    content: (add) => addMountFiles(add, m),
    ended: async () =>
      viewContainer(
        await tracker.until((p) => isTerminal(viewContainer(p, name, true)), m.deadline + FEED_END_GRACE_MS, 'the file copy did not finish'),
        name,
        true,
      ),
    logTail: () => lastLogLines(m.kube, podName, name),
  });
  if (result.delivered) return;
  if (result.exitCode !== undefined) throw new RunError(`copying mounted files into the pod failed (tar exit ${result.exitCode}): ${result.why}`);
  throw new RunError(`copying mounted files into the pod failed: ${result.why}`, 125);
}

async function addMountFiles(add: AddEntry, m: MountFeed): Promise<void> {
  const entries: TarEntry[] = [...m.plan.mountData.entries];
  const stdinEntry = m.plan.mountData.stdinEntry;
  if (m.stdinAsFile && stdinEntry) entries.push({ name: stdinEntry, type: 'file', mode: 0o444, data: m.stdin ? await buffer(m.stdin) : Buffer.alloc(0) });
  for (const e of entries) {
    if (e.type === 'file') await add({ name: e.name, type: 'file', mode: e.mode }, e.data ?? Buffer.alloc(0));
    else if (e.type === 'directory') await add({ name: e.name, type: 'directory', mode: e.mode });
    else await add({ name: e.name, type: 'symlink', linkname: e.linkname ?? '' });
  }
}
