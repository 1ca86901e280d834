/**
 * An in-memory cluster for berth serve's engine: objects kept in maps, a pod watch fed from them, and a
 * kubelet the test drives (run, exit) or lets run every pod at once. No HTTP, no client-node.
 */
import { PassThrough, Readable, type Duplex } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { Claim, ExecIo, LogQuery, NetworkPolicy, Pod, PodTemplate, ServeCluster, Service, Session } from '../../../src/dockerapi/cluster.js';
import { StreamLost } from '../../../src/kube/errors.js';
import { FEED_CONTAINER } from '../../../src/dockerapi/containers/file-feed.js';

type Watcher = (type: string, pod: Pod) => void;

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
  execAnswer: (call: ExecCall) => { exitCode: number; stdout?: string; stderr?: string; lost?: boolean } = () => ({ exitCode: 0 });
  /** Every created pod runs at once (as a kubelet with the image at hand). */
  autoRun = true;
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

  /** The kubelet starts the pod's main container. */
  run(name: string): void {
    const pod = this.pod(name);
    pod.status = {
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
    // The file feed's init container ends once its folder is marked ready: then the main container runs.
    if (container === 'berth-files' && argv.join(' ').includes('.berth-ready') && this.autoRun) setImmediate(() => this.pods.has(pod) && this.run(pod));
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

  async attachStdin(): Promise<Session> {
    return { done: Promise.resolve(), close: () => undefined };
  }

  async openLog(_pod: string, _container: string, _q: LogQuery): Promise<Readable> {
    return Readable.from([]);
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
