/**
 * The sending end of a file feed: the archive of what a face gives (feed-tar.ts) streamed into the receiver
 * its planner put in the pod (feed-receiver.ts), then the receiver's end read as its face's watch sees it. One
 * sender for the docker shim and berth fn (run.ts), a task's inputs (task/run-task.ts) and the files copied into a
 * berth serve container before its start (dockerapi/engine-start.ts); each words the result in its own terms.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { FeedPlan } from './feed-receiver.js';
import { feedTar, type FeedContent } from './feed-tar.js';
import type { ContainerView } from './pod-status.js';

/** After the start deadline, how long a receiver that runs may take to unpack what it was sent. */
export const FEED_END_GRACE_MS = 60_000;

/** How long the receiver's last words may trail its end (they come before the session's end, which follows it). */
const LAST_WORDS_MS = 2_000;

/** An attach session to a receiver (kube/streams.ts's StreamSession is one). */
export interface FeedSession {
  done: Promise<unknown>;
  /** Whether the server can end stdin itself (v5.channel.k8s.io); without it the sender ends the session. */
  supportsStdinClose: boolean;
  /** Resolves once all of stdin is handed to the socket. */
  stdinSent: Promise<void>;
  close(): void;
}

/** The one call a feed makes of the cluster (kube/client.ts's ClusterClient makes it). */
export interface FeedAttach {
  attachFeed(pod: string, container: string, stdin: Readable, stderr: Writable): Promise<FeedSession>;
}

export interface Feed {
  cluster: FeedAttach;
  pod: string;
  plan: FeedPlan;
  /** What goes into the pod; the marker follows it. A failure here fails sendFeed with it (nothing to retry). */
  content: FeedContent;
  /** The receiver once it ended (terminated or failed), from the face's watch; rejects at the face's deadline. */
  ended(): Promise<ContainerView>;
  /** The receiver's last log lines, when its stderr did not come through the session ('' when none). */
  logTail?(): Promise<string>;
  signal?: AbortSignal;
}

/** Delivered, or why not: `exitCode` when the receiver exited with one (1: the stream was cut). */
export type FeedResult = { delivered: true } | { delivered: false; why: string; exitCode?: number };

/** Streams the feed into its receiver and reads how the receiver ended. */
export async function sendFeed(f: Feed): Promise<FeedResult> {
  const tar = feedTar(f.content, f.plan.marker);
  let sourceFailure: Error | undefined;
  const sourceFailed = new Promise<never>((_, reject) =>
    tar.once('error', (err: Error) => {
      sourceFailure = err;
      reject(err);
    }),
  );
  sourceFailed.catch(() => undefined);
  const stderr = new PassThrough();
  const said: Buffer[] = [];
  stderr.on('data', (c: Buffer) => said.push(c));

  let session: FeedSession;
  try {
    session = await Promise.race([f.cluster.attachFeed(f.pod, f.plan.container, tar, stderr), sourceFailed]);
  } catch (err) {
    if (sourceFailure) throw sourceFailure;
    tar.destroy();
    return { delivered: false, why: (err as Error).message };
  }
  const close = (): void => session.close();
  f.signal?.addEventListener('abort', close, { once: true });
  // Without v5 the end of the session is the end of the receiver's input (stdinOnce): busybox's tar reads to EOF.
  if (!session.supportsStdinClose) void session.stdinSent.then(close);
  try {
    const end = await Promise.race([f.ended(), sourceFailed]);
    await Promise.race([session.done.catch(() => undefined), delay(LAST_WORDS_MS)]);
    if (end.state === 'terminated' && end.exitCode === 0) return { delivered: true };
    const words = Buffer.concat(said).toString('utf8').trim() || (await f.logTail?.().catch(() => '')) || '';
    if (end.state === 'terminated') return { delivered: false, exitCode: end.exitCode, why: words || end.message || end.reason || '' };
    return { delivered: false, why: end.state === 'failed' ? end.message : `the receiver is ${end.state}` };
  } finally {
    f.signal?.removeEventListener('abort', close);
    close();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
