/**
 * An in-memory cluster for berth serve's engine: objects kept in maps, a pod watch fed from them, and a
 * kubelet the test drives (run, exit) or lets run every pod at once. No HTTP, no client-node.
 */
import { PassThrough, Readable, type Duplex, type Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { extract } from 'tar-stream';
import type { V1ContainerState } from '@kubernetes/client-node';
import type { Claim, ExecIo, LogQuery, NetworkPolicy, Pod, PodTemplate, ServeCluster, Service, Session } from '../../../src/dockerapi/cluster.js';
import type { FeedSession } from '../../../src/runtime/file-feed.js';
import { StreamLost } from '../../../src/kube/errors.js';
import { FEED_CONTAINER, FEED_PLAN } from '../../../src/dockerapi/containers/file-feed.js';

type Watcher = (type: string, pod: Pod) => void;

/** A feed into a pod's receiver: the bytes it got before its input ended, and the entries they held. */
export interface FeedCall {
  pod: string;
  container: string;
  received: Buffer;
  entries: Array<{ name: string; type: string; linkname?: string; data: string }>;
}

export interface ExecCall {
  pod: string;
  container: string;
  argv: string[];
  /** everything written to the exec's stdin, once it ends */
  stdin?: Promise<Buffer>;
}

export class FakeCluster implements ServeCluster {
  readonly namespace = 'test';
  readonly pods = new Map<string, Pod>();
  readonly services = new Map<string, Service>();
  readonly claims = new Map<string, Claim>();
  readonly policies = new Map<string, NetworkPolicy>();
  readonly templates = new Map<string, PodTemplate>();
  readonly execs: ExecCall[] = [];
  /** What an exec answers; default: exit 0, no output. */
  execAnswer: (call: ExecCall) => { exitCode: number; stdout?: string | Buffer; stderr?: string; lost?: boolean } = () => ({ exitCode: 0 });
  /** Every created pod runs at once (as a kubelet with the image at hand). */
  autoRun = true;
  /** The file feeds attached to, in order: what each receiver got before its input ended. */
  readonly feeds: FeedCall[] = [];
  /** A feed's stream is cut after this many bytes (a connection lost midway); default: never. */
  feedCutAfter?: number;
  /** What a feed's receiver answers instead of unpacking what it got (a full disk, say). */
  feedAnswer?: (call: FeedCall) => { exitCode: number; stderr: string };
  /** Log lines of a pod's container (`pod/container`), as `openLog` gives them. */
  readonly logs = new Map<string, string>();
  private readonly watchers = new Set<Watcher>();
  private nextIp = 10;

  async createPod(pod: Pod): Promise<Pod> {
    const name = pod.metadata!.name!;
    if (this.pods.has(name)) throw Object.assign(new Error(`pods "${name}" already exists`), { code: 409 });
    const stored: Pod = structuredClone(pod);
    stored.metadata!.creationTimestamp = new Date();
    stored.status = { phase: 'Pending' };
    this.pods.set(name, stored);
    this.notify('ADDED', stored);
    // the file feed holds the pod until the engine ends it; other init containers (the isolation gate) pass at once
    if (stored.spec?.initContainers?.some((c) => c.name === FEED_CONTAINER)) setImmediate(() => this.pods.has(name) && this.runInit(name));
    else if (this.autoRun) setImmediate(() => this.pods.has(name) && this.run(name));
    return stored;
  }

  /** The kubelet runs the pod's init containers (the main one waits until the test or an exec ends them). */
  runInit(name: string): void {
    const pod = this.pod(name);
    const running = { running: { startedAt: new Date() } };
    pod.status = {
      phase: 'Pending',
      initContainerStatuses: (pod.spec?.initContainers ?? []).map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: running,
      })),
    };
    this.notify('MODIFIED', pod);
  }

  /** The kubelet starts the pod's main container (its init containers' states kept). */
  run(name: string): void {
    const pod = this.pod(name);
    pod.status = {
      ...(pod.status?.initContainerStatuses ? { initContainerStatuses: pod.status.initContainerStatuses } : {}),
      phase: 'Running',
      podIP: `10.0.0.${this.nextIp++}`,
      startTime: new Date(),
      containerStatuses: [{ name: 'main', image: '', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date() } } }],
    };
    this.notify('MODIFIED', pod);
  }

  /** The main container ends with `code`. */
  exit(name: string, code: number): void {
    const pod = this.pod(name);
    const startedAt = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? new Date();
    pod.status = {
      ...pod.status,
      phase: code === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        { name: 'main', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code, startedAt, finishedAt: new Date() } } },
      ],
    };
    this.notify('MODIFIED', pod);
  }

  pod(name: string): Pod {
    const pod = this.pods.get(name);
    if (!pod) throw Object.assign(new Error(`pods "${name}" not found`), { code: 404 });
    return pod;
  }

  async readPod(name: string): Promise<Pod> {
    return this.pod(name);
  }

  async listPods(labelSelector: string): Promise<Pod[]> {
    return [...this.pods.values()].filter((p) => selects(labelSelector, p.metadata?.labels));
  }

  async expirePod(name: string): Promise<void> {
    this.exit(name, 137);
  }

  async annotatePod(name: string, annotations: Record<string, string>): Promise<void> {
    const pod = this.pod(name);
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...annotations };
  }

  async deletePod(name: string): Promise<void> {
    const pod = this.pods.get(name);
    if (!pod) return;
    this.pods.delete(name);
    this.notify('DELETED', pod);
  }

  async createService(svc: Service): Promise<Service> {
    this.services.set(svc.metadata!.name!, structuredClone(svc));
    return svc;
  }

  async deleteService(name: string): Promise<void> {
    this.services.delete(name);
  }

  async listServices(labelSelector: string): Promise<Service[]> {
    return [...this.services.values()].filter((s) => selects(labelSelector, s.metadata?.labels));
  }

  async createClaim(pvc: Claim): Promise<Claim> {
    const stored = structuredClone(pvc);
    stored.metadata!.creationTimestamp = new Date();
    this.claims.set(pvc.metadata!.name!, stored);
    return stored;
  }

  async deleteClaim(name: string): Promise<void> {
    this.claims.delete(name);
  }

  async listClaims(labelSelector: string): Promise<Claim[]> {
    return [...this.claims.values()].filter((c) => selects(labelSelector, c.metadata?.labels));
  }

  async createNetworkPolicy(np: NetworkPolicy): Promise<NetworkPolicy> {
    this.policies.set(np.metadata!.name!, structuredClone(np));
    return np;
  }

  async deleteNetworkPolicy(name: string): Promise<void> {
    this.policies.delete(name);
  }

  async listNetworkPolicies(labelSelector: string): Promise<NetworkPolicy[]> {
    return [...this.policies.values()].filter((p) => selects(labelSelector, p.metadata?.labels));
  }

  async readPodTemplate(name: string): Promise<PodTemplate> {
    const t = this.templates.get(name);
    if (!t) throw Object.assign(new Error(`podtemplates "${name}" not found`), { code: 404 });
    return t;
  }

  async exec(pod: string, container: string, argv: string[], io: ExecIo): Promise<{ session: Session; done: Promise<{ exitCode: number }> }> {
    this.pod(pod);
    const call: ExecCall = { pod, container, argv, stdin: io.stdin ? buffer(io.stdin) : undefined };
    this.execs.push(call);
    const answer = this.execAnswer(call);
    if (answer.stderr) io.stderr?.write(answer.stderr);
    if (answer.stdout) io.stdout?.write(answer.stdout);
    // lost: the connection went before the server's status (what a dropped exec stream looks like)
    const done = answer.lost
      ? Promise.reject(new StreamLost('the pods/exec stream closed without a status: the connection was lost'))
      : Promise.resolve({ exitCode: answer.exitCode });
    done.catch(() => undefined);
    return { session: { done, close: () => undefined }, done };
  }

  /**
   * The receiver of a file feed, as its script behaves: it unpacks what arrives until its input ends, and exits 0
   * only when the marker came last (1 with its words otherwise); the pod runs or fails with it. A cut stream
   * takes the receiver's words with it: they are in its log only.
   */
  async attachFeed(pod: string, container: string, stdin: Readable, stderr: Writable): Promise<FeedSession> {
    this.pod(pod);
    if (container !== FEED_CONTAINER) throw new Error(`attach to ${container}: berth feeds only ${FEED_CONTAINER}`);
    const call: FeedCall = { pod, container, received: Buffer.alloc(0), entries: [] };
    this.feeds.push(call);
    const cut = this.feedCutAfter;
    const sent = cut === undefined ? buffer(stdin) : firstBytes(stdin, cut);
    const done = sent.then(async (received) => {
      call.received = received;
      const unpacked = await unpack(received);
      call.entries = unpacked.entries;
      const marker = unpacked.entries.at(-1)?.name === FEED_PLAN.marker;
      const answer =
        this.feedAnswer?.(call) ??
        (unpacked.error
          ? { exitCode: 1, stderr: unpacked.error }
          : marker
            ? { exitCode: 0, stderr: '' }
            : { exitCode: 1, stderr: 'berth: the file copy stream was cut before its end' });
      if (cut === undefined) stderr.write(answer.stderr);
      else this.logs.set(`${pod}/${container}`, answer.stderr);
      this.endReceiver(pod, answer.exitCode);
      if (cut !== undefined) throw new StreamLost('the pods/attach stream closed without a status: the connection was lost');
    });
    done.catch(() => undefined);
    return { done, supportsStdinClose: true, stdinSent: sent.then(() => undefined), close: () => stdin.destroy() };
  }

  /** The feed's receiver ended: the main container runs (exit 0, as the kubelet goes on), or the pod fails. */
  private endReceiver(name: string, exitCode: number): void {
    if (!this.pods.has(name)) return;
    const pod = this.pod(name);
    const ended: V1ContainerState = { terminated: { exitCode, startedAt: new Date(), finishedAt: new Date() } };
    pod.status = {
      ...pod.status,
      phase: exitCode === 0 ? 'Pending' : 'Failed',
      initContainerStatuses: (pod.status?.initContainerStatuses ?? []).map((s) => (s.name === FEED_CONTAINER ? { ...s, state: ended } : s)),
    };
    this.notify('MODIFIED', pod);
    if (exitCode === 0 && this.autoRun) this.run(name);
  }

  async attachStdin(): Promise<Session> {
    return { done: Promise.resolve(), close: () => undefined };
  }

  async openLog(pod: string, container: string, _q: LogQuery): Promise<Readable> {
    const log = this.logs.get(`${pod}/${container}`);
    return Readable.from(log ? [Buffer.from(`${log}\n`)] : []);
  }

  async forward(): Promise<Duplex> {
    return new PassThrough();
  }

  watchPods(labelSelector: string, onPod: Watcher, _onError: (err: Error) => void, onSync?: (pods: Pod[], listStartedAt: number) => void): () => void {
    const watcher: Watcher = (type, pod) => selects(labelSelector, pod.metadata?.labels) && onPod(type, pod);
    const listStartedAt = Date.now();
    onSync?.(
      [...this.pods.values()].filter((p) => selects(labelSelector, p.metadata?.labels)),
      listStartedAt,
    );
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  notify(type: string, pod: Pod): void {
    for (const w of this.watchers) w(type, structuredClone(pod));
  }
}

/** `k=v,k=v` equality selectors, as berth uses them. */
function selects(selector: string, labels: Record<string, string> | undefined): boolean {
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split('=');
      return labels?.[k] === v;
    });
}

/** The first `n` bytes of a stream; then the connection is gone (the stream destroyed). */
async function firstBytes(stdin: Readable, n: number): Promise<Buffer> {
  const got: Buffer[] = [];
  let length = 0;
  for await (const chunk of stdin) {
    got.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length >= n) break;
  }
  stdin.destroy();
  return Buffer.concat(got).subarray(0, n);
}

/** The entries of what a receiver got, as tar unpacks them: those before a cut, and busybox tar's words for one inside an entry. */
async function unpack(tar: Buffer): Promise<{ entries: FeedCall['entries']; error?: string }> {
  const entries: FeedCall['entries'] = [];
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    const data: Buffer[] = [];
    stream.on('data', (c: unknown) => data.push(c as Buffer));
    stream.on('end', () => {
      entries.push({
        name: header.name,
        type: header.type,
        ...(header.linkname ? { linkname: header.linkname } : {}),
        data: Buffer.concat(data).toString('utf8'),
      });
      next();
    });
  });
  const done = new Promise<string | undefined>((resolve) => {
    ex.on('finish', () => resolve(undefined));
    ex.on('error', () => resolve('tar: short read'));
  });
  ex.end(tar);
  return { entries, error: await done };
}
