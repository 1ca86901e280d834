/**
 * The receiving end of a file feed, planned (pure): the init container that unpacks the tar berth streams into
 * its stdin before the pod's main container runs. Every face that feeds files uses it: the docker shim's and
 * berth fn's mounts and stdin-as-a-file (plan.ts), a task's inputs (task/pod-plan.ts), the files copied into a
 * berth serve container before its start (dockerapi/containers/file-feed.ts). runtime/file-feed.ts sends.
 *
 * The protocol: the archive's last entry is a marker, and the receiver fails unless it arrived (a stream cut
 * between two entries still looks like a whole archive to tar, and the main container must never start with part
 * of its files). stdinOnce: the end of the attach session is the end of its input on clusters whose attach cannot
 * end stdin (no v5.channel.k8s.io), where the sender ends the session instead (busybox's tar reads to EOF).
 */
import type { V1Container, V1VolumeMount } from '@kubernetes/client-node';
import { lockedDownContainer, type RunAs } from './pod-rules.js';

/** What the sender needs of a planned receiver: which container to attach to, and the marker to end with. */
export interface FeedPlan {
  container: string;
  marker: string;
}

export interface FeedReceiverSpec extends FeedPlan {
  image: string;
  /** The folder the archive is unpacked into (its root is the archive's root). */
  dir: string;
  /** What the stream carries, in the face's words: `berth: the ${carries} stream was cut before its end`. */
  carries: string;
  /**
   * The folder and the marker written as quoted shell words. A task's working directory is quoted; the shim's
   * fixed folder is not (a pod differing in a byte is a different warm pod, so neither changes).
   */
  quoted?: boolean;
  /** The marker is deleted once checked (it would otherwise show in the task's working directory). */
  removeMarker?: boolean;
  /** Shell lines run once the whole feed arrived (a failure of the receipt ends the receiver with 1 first). */
  then?: string[];
  volumeMounts: V1VolumeMount[];
  /**
   * Whom the receiver runs as; the files it unpacks are theirs (tar -o). A user: the run's (the shim, whose pod's
   * user a pod template may change); `pod`: the pod's (a task, whose task container runs as the pod's user too);
   * `fed container`: the security context of the container it feeds, as laid on the pod template (berth serve,
   * whose sandbox planner gives it that), so the files are theirs exactly as the main container sees itself.
   */
  runAs: { user: RunAs | undefined } | 'pod' | 'fed container';
}

/** The receiver as an init container of the pod. */
export function planFeedReceiver(s: FeedReceiverSpec): V1Container {
  const word = (path: string): string => (s.quoted ? `'${path.replace(/'/g, `'\\''`)}'` : path);
  const marker = word(`${s.dir}/${s.marker}`);
  // -o: the caller's uid/gid are not restored (capabilities are dropped); the files belong to the receiver's user.
  const receipt = [
    `tar -x -o -f - -C ${word(s.dir)}`,
    `test -e ${marker} || { echo 'berth: the ${s.carries} stream was cut before its end' >&2; exit 1; }`,
    ...(s.removeMarker ? [`rm -f ${marker}`] : []),
  ].join(' && ');
  const script = s.then?.length ? [`${receipt} || exit 1`, ...s.then].join('\n') : receipt;
  return {
    name: s.container,
    image: s.image,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    stdin: true,
    stdinOnce: true,
    ...(s.runAs === 'fed container' ? {} : lockedDownContainer(s.runAs === 'pod' ? {} : { user: s.runAs.user })),
    volumeMounts: s.volumeMounts,
  };
}
