/**
 * A Sandbox cluster: the Kubernetes calls a long-lived pod needs when it is driven from outside
 * (Docker API containers): create/delete pods, Services and claims, one watch over all pods of a
 * berth instance, exec, stdin-only attach, raw log streams (with the KEP-3288 `stream` parameter,
 * which client-node's Log helper does not pass), and port-forward per TCP connection.
 */
import https from 'node:https';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Duplex, type Readable, type Writable } from 'node:stream';
import { CoreV1Api, Watch, type KubeConfig, type V1PersistentVolumeClaim, type V1Pod, type V1PodTemplate, type V1Service } from '@kubernetes/client-node';
import { KubeError, statusOf, toKubeError } from '../kube/errors.js';
import { exitCodeOfStatus, openAttach, openExec, type StreamSession } from '../kube/streams.js';
import { openPortForward } from '../kube/port-forward.js';

export interface ExecOutcome {
  exitCode: number;
}

export interface LogQuery {
  follow?: boolean;
  /** `Stdout`, `Stderr` or `All` (KEP-3288). */
  stream?: 'Stdout' | 'Stderr' | 'All';
  tailLines?: number;
  timestamps?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
}

export class SandboxCluster {
  readonly core: CoreV1Api;

  constructor(
    readonly kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  private async guard<T>(p: Promise<T>, verb: string, resource: string, name?: string): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw toKubeError(err, { verb, resource, namespace: this.namespace, name, server: this.kc.getCurrentCluster()?.server });
    }
  }

  createPod(pod: V1Pod): Promise<V1Pod> {
    return this.guard(this.core.createNamespacedPod({ namespace: this.namespace, body: pod }), 'create', 'pods', pod.metadata?.name);
  }

  readPod(name: string): Promise<V1Pod> {
    return this.guard(this.core.readNamespacedPod({ namespace: this.namespace, name }), 'get', 'pods', name);
  }

  listPods(labelSelector: string): Promise<V1Pod[]> {
    return this.guard(this.core.listNamespacedPod({ namespace: this.namespace, labelSelector }), 'list', 'pods').then((l) => l.items);
  }

  /** Lowers activeDeadlineSeconds so the kubelet stops the pod and keeps the object (logs, exit state). */
  async expirePod(name: string, seconds: number): Promise<void> {
    await this.guard(
      this.core.patchNamespacedPod({ namespace: this.namespace, name, body: [{ op: 'replace', path: '/spec/activeDeadlineSeconds', value: Math.max(1, seconds) }] }),
      'patch',
      'pods',
      name,
    );
  }

  /** Sets (adds or replaces) annotations on a pod. */
  async annotatePod(name: string, annotations: Record<string, string>): Promise<void> {
    const ops = Object.entries(annotations).map(([k, value]) => ({ op: 'add', path: `/metadata/annotations/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }));
    await this.guard(this.core.patchNamespacedPod({ namespace: this.namespace, name, body: ops }), 'patch', 'pods', name);
  }

  async deletePod(name: string, graceSeconds = 0): Promise<void> {
    await this.ignore404(this.core.deleteNamespacedPod({ namespace: this.namespace, name, gracePeriodSeconds: graceSeconds }), 'delete', 'pods', name);
  }

  createService(svc: V1Service): Promise<V1Service> {
    return this.guard(this.core.createNamespacedService({ namespace: this.namespace, body: svc }), 'create', 'services', svc.metadata?.name);
  }

  async deleteService(name: string): Promise<void> {
    await this.ignore404(this.core.deleteNamespacedService({ namespace: this.namespace, name }), 'delete', 'services', name);
  }

  listServices(labelSelector: string): Promise<V1Service[]> {
    return this.guard(this.core.listNamespacedService({ namespace: this.namespace, labelSelector }), 'list', 'services').then((l) => l.items);
  }

  createClaim(pvc: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
    return this.guard(this.core.createNamespacedPersistentVolumeClaim({ namespace: this.namespace, body: pvc }), 'create', 'persistentvolumeclaims', pvc.metadata?.name);
  }

  async deleteClaim(name: string): Promise<void> {
    await this.ignore404(this.core.deleteNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }), 'delete', 'persistentvolumeclaims', name);
  }

  listClaims(labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    return this.guard(this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector }), 'list', 'persistentvolumeclaims').then((l) => l.items);
  }

  readPodTemplate(name: string): Promise<V1PodTemplate> {
    return this.guard(this.core.readNamespacedPodTemplate({ namespace: this.namespace, name }), 'get', 'podtemplates', name);
  }

  private async ignore404(p: Promise<unknown>, verb: string, resource: string, name: string): Promise<void> {
    try {
      await p;
    } catch (err) {
      if (statusOf(err).code === 404) return;
      throw toKubeError(err, { verb, resource, namespace: this.namespace, name });
    }
  }

  /** Runs `command` in the pod; stdout/stderr forwarded as they come; the exit code from the Status channel. */
  async exec(pod: string, container: string, command: string[], io: { stdin?: Readable; stdout?: Writable; stderr?: Writable; tty?: boolean }): Promise<{ session: StreamSession; done: Promise<ExecOutcome> }> {
    const session = await openExec(this.kc, this.namespace, pod, container, command, { ...io, requireStdinClose: Boolean(io.stdin) });
    const done = session.done.then((r) => ({ exitCode: exitCodeOfStatus(r.status) ?? 126 }));
    return { session, done };
  }

  /** Feeds stdin only: output is read from the log, which also holds what was written before attaching. */
  attachStdin(pod: string, container: string, stdin: Readable, tty: boolean): Promise<StreamSession> {
    // stdout is asked for and dropped: with stdin alone the kubelet announces the session with an empty
    // frame on the status channel, which openAttach would try to parse as the final Status.
    const discard = new PassThrough().resume();
    return openAttach(this.kc, this.namespace, pod, container, { stdin, stdout: discard, tty, requireStdinClose: true });
  }

  /** The pod log as a byte stream (chunked, kept open while following). */
  async openLog(pod: string, container: string, q: LogQuery): Promise<IncomingMessage> {
    const params = new URLSearchParams({ container });
    if (q.follow) params.set('follow', 'true');
    if (q.stream && q.stream !== 'All') params.set('stream', q.stream);
    if (q.tailLines !== undefined) params.set('tailLines', String(q.tailLines));
    if (q.timestamps) params.set('timestamps', 'true');
    if (q.sinceSeconds !== undefined) params.set('sinceSeconds', String(Math.max(1, q.sinceSeconds)));
    if (q.sinceTime) params.set('sinceTime', q.sinceTime);
    const res = await this.rawGet(`/api/v1/namespaces/${this.namespace}/pods/${pod}/log?${params.toString()}`);
    if ((res.statusCode ?? 500) >= 300) {
      const body = await readText(res);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* plain text */
      }
      throw toKubeError({ code: res.statusCode, body: parsed }, { verb: 'get', resource: 'pods/log', namespace: this.namespace, name: pod });
    }
    return res;
  }

  private async rawGet(path: string): Promise<IncomingMessage> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new KubeError('the kubeconfig names no cluster server');
    const url = new URL(path, server);
    const opts: https.RequestOptions = { method: 'GET', headers: {} };
    await this.kc.applyToHTTPSOptions(opts);
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, opts, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  /** One port-forward for one TCP connection, as a Duplex: the connection inside the pod. */
  forward(pod: string, port: number): Promise<Duplex> {
    return openPortForward(this.kc, this.namespace, pod, port);
  }

  /**
   * Watches every pod matching `labelSelector`, resuming after the server ends the watch; `onPod` sees
   * ADDED/MODIFIED/DELETED. Returns a stop function.
   */
  watchPods(labelSelector: string, onPod: (type: string, pod: V1Pod) => void, onError: (err: Error) => void): () => void {
    const watch = new Watch(this.kc);
    let stopped = false;
    let controller: AbortController | undefined;
    let resourceVersion: string | undefined;
    const start = (): void => {
      if (stopped) return;
      const query: Record<string, string | boolean> = { labelSelector, allowWatchBookmarks: true };
      if (resourceVersion) query.resourceVersion = resourceVersion;
      watch
        .watch(
          `/api/v1/namespaces/${this.namespace}/pods`,
          query,
          (type, obj: V1Pod & { code?: number }) => {
            if (type === 'ERROR') {
              if (obj.code === 410) resourceVersion = undefined;
              return;
            }
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
            if (type !== 'BOOKMARK') onPod(type, obj);
          },
          (err: unknown) => {
            if (stopped) return;
            if (err && (err as { name?: string }).name !== 'AbortError') onError(err as Error);
            setTimeout(start, err ? 500 : 0).unref();
          },
        )
        .then((c) => {
          controller = c;
          if (stopped) c.abort();
        })
        .catch((err: unknown) => {
          onError(err as Error);
          if (!stopped) setTimeout(start, 1000).unref();
        });
    };
    start();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}

async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
