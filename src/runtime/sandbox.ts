/**
 * A Sandbox cluster: the Kubernetes calls a long-lived pod needs when it is driven from outside
 * (Docker API containers): create/delete pods, Services and claims, one watch over all pods of a
 * berth instance, exec, stdin-only attach, raw log streams (with the KEP-3288 `stream` parameter,
 * which client-node's Log helper does not pass), and port-forward per TCP connection.
 *
 * Every idempotent call (get, list, patch, delete, log, an exec whose upgrade was refused) and every
 * create of a fixed name is retried on transient failures (5xx, 429, dropped connections) through
 * kube/retry.ts: one overloaded moment of the API server must not become a failed container. A create
 * whose first answer was lost comes back as 409 on the next try; the object is read back and taken
 * when it carries every label and annotation we sent (so it is the one we created, not a namesake).
 */
import https from 'node:https';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Duplex, type Readable, type Writable } from 'node:stream';
import { CoreV1Api, Watch, type KubeConfig, type V1ObjectMeta as ObjectMeta, type V1PersistentVolumeClaim, type V1Pod, type V1PodTemplate, type V1Service } from '@kubernetes/client-node';
import { KubeError, statusOf, toKubeError } from '../kube/errors.js';
import { exitCodeOfStatus, openAttach, openExec, type StreamSession } from '../kube/streams.js';
import { openPortForward } from '../kube/port-forward.js';
import { withRetry } from '../kube/retry.js';

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

  /** An idempotent call, retried on transient failures, its final failure as a sentence. */
  private retried<T>(call: () => Promise<T>, verb: string, resource: string, name?: string): Promise<T> {
    return this.guard(withRetry(call), verb, resource, name);
  }

  /** A create of a fixed name, retried; a 409 after a lost answer is resolved by reading the object back. */
  private created<T extends { metadata?: ObjectMeta }>(body: T, create: () => Promise<T>, read: () => Promise<T>, resource: string): Promise<T> {
    const onConflict = async (): Promise<T | undefined> => {
      const found = await read();
      return isOurs(body.metadata, found.metadata) ? found : undefined;
    };
    return this.guard(withRetry(create, { onConflict }), 'create', resource, body.metadata?.name);
  }

  createPod(pod: V1Pod): Promise<V1Pod> {
    const name = pod.metadata?.name ?? '';
    return this.created(pod, () => this.core.createNamespacedPod({ namespace: this.namespace, body: pod }), () => this.core.readNamespacedPod({ namespace: this.namespace, name }), 'pods');
  }

  readPod(name: string): Promise<V1Pod> {
    return this.retried(() => this.core.readNamespacedPod({ namespace: this.namespace, name }), 'get', 'pods', name);
  }

  listPods(labelSelector: string): Promise<V1Pod[]> {
    return this.listPodsAt(labelSelector).then((l) => l.items);
  }

  /** The pods and the list's resourceVersion, from which a watch misses nothing. */
  listPodsAt(labelSelector: string): Promise<{ items: V1Pod[]; resourceVersion?: string }> {
    return this.retried(() => this.core.listNamespacedPod({ namespace: this.namespace, labelSelector }), 'list', 'pods').then((l) => ({ items: l.items, resourceVersion: l.metadata?.resourceVersion }));
  }

  /** Lowers activeDeadlineSeconds so the kubelet stops the pod and keeps the object (logs, exit state). */
  async expirePod(name: string, seconds: number): Promise<void> {
    await this.retried(
      () => this.core.patchNamespacedPod({ namespace: this.namespace, name, body: [{ op: 'replace', path: '/spec/activeDeadlineSeconds', value: Math.max(1, seconds) }] }),
      'patch',
      'pods',
      name,
    );
  }

  /** Sets (adds or replaces) annotations on a pod. */
  async annotatePod(name: string, annotations: Record<string, string>): Promise<void> {
    const ops = Object.entries(annotations).map(([k, value]) => ({ op: 'add', path: `/metadata/annotations/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }));
    await this.retried(() => this.core.patchNamespacedPod({ namespace: this.namespace, name, body: ops }), 'patch', 'pods', name);
  }

  async deletePod(name: string, graceSeconds = 0): Promise<void> {
    await this.ignore404(() => this.core.deleteNamespacedPod({ namespace: this.namespace, name, gracePeriodSeconds: graceSeconds }), 'delete', 'pods', name);
  }

  createService(svc: V1Service): Promise<V1Service> {
    const name = svc.metadata?.name ?? '';
    return this.created(svc, () => this.core.createNamespacedService({ namespace: this.namespace, body: svc }), () => this.core.readNamespacedService({ namespace: this.namespace, name }), 'services');
  }

  async deleteService(name: string): Promise<void> {
    await this.ignore404(() => this.core.deleteNamespacedService({ namespace: this.namespace, name }), 'delete', 'services', name);
  }

  listServices(labelSelector: string): Promise<V1Service[]> {
    return this.retried(() => this.core.listNamespacedService({ namespace: this.namespace, labelSelector }), 'list', 'services').then((l) => l.items);
  }

  createClaim(pvc: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
    const name = pvc.metadata?.name ?? '';
    return this.created(pvc, () => this.core.createNamespacedPersistentVolumeClaim({ namespace: this.namespace, body: pvc }), () => this.core.readNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }), 'persistentvolumeclaims');
  }

  async deleteClaim(name: string): Promise<void> {
    await this.ignore404(() => this.core.deleteNamespacedPersistentVolumeClaim({ namespace: this.namespace, name }), 'delete', 'persistentvolumeclaims', name);
  }

  listClaims(labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    return this.retried(() => this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector }), 'list', 'persistentvolumeclaims').then((l) => l.items);
  }

  readPodTemplate(name: string): Promise<V1PodTemplate> {
    return this.retried(() => this.core.readNamespacedPodTemplate({ namespace: this.namespace, name }), 'get', 'podtemplates', name);
  }

  /** A delete, retried; 404 is success (also when an earlier try's answer was lost). */
  private async ignore404(call: () => Promise<unknown>, verb: string, resource: string, name: string): Promise<void> {
    try {
      await withRetry(call);
    } catch (err) {
      if (statusOf(err).code === 404) return;
      throw toKubeError(err, { verb, resource, namespace: this.namespace, name });
    }
  }

  /**
   * Runs `command` in the pod; stdout/stderr forwarded as they come; the exit code from the Status channel.
   * An upgrade the server refused with a transient status is tried again: the command never ran then.
   * A session that drops after the upgrade is not (the command may have run): `done` rejects.
   */
  async exec(pod: string, container: string, command: string[], io: { stdin?: Readable; stdout?: Writable; stderr?: Writable; tty?: boolean }): Promise<{ session: StreamSession; done: Promise<ExecOutcome> }> {
    const session = await withRetry(async () => {
      try {
        return await openExec(this.kc, this.namespace, pod, container, command, { ...io, requireStdinClose: Boolean(io.stdin) });
      } catch (err) {
        // Only an HTTP refusal proves the command did not start; anything else is final.
        throw statusOf(err).code !== undefined ? err : new FinalError(err);
      }
    }, { attempts: 4 }).catch((err: unknown) => {
      throw err instanceof FinalError ? err.inner : err;
    });
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
    const path = `/api/v1/namespaces/${this.namespace}/pods/${pod}/log?${params.toString()}`;
    const open = async (): Promise<IncomingMessage> => {
      const res = await this.rawGet(path);
      if ((res.statusCode ?? 500) < 300) return res;
      const body = await readText(res);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* plain text */
      }
      throw { code: res.statusCode, body: parsed, headers: res.headers };
    };
    try {
      return await withRetry(open);
    } catch (err) {
      throw toKubeError(err, { verb: 'get', resource: 'pods/log', namespace: this.namespace, name: pod });
    }
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
   * Watches every pod matching `labelSelector` as a reflector does: a list (whose pods go to `onSync`, so
   * the caller can settle what it missed), then a watch from the list's resourceVersion, resumed from the
   * last version seen after the server ends it or fails, and listed afresh when that version expired
   * (410). `onPod` sees ADDED/MODIFIED/DELETED. Returns a stop function.
   */
  watchPods(
    labelSelector: string,
    onPod: (type: string, pod: V1Pod) => void,
    onError: (err: Error) => void,
    onSync: (pods: V1Pod[], listStartedAt: number) => void = () => undefined,
  ): () => void {
    const watch = new Watch(this.kc);
    let stopped = false;
    let controller: AbortController | undefined;
    let resourceVersion: string | undefined;
    let failures = 0;
    const again = (err: unknown): void => {
      if (stopped) return;
      if (err && (err as { name?: string }).name !== 'AbortError') {
        failures++;
        onError(err as Error);
      }
      // An ended watch resumes at once; failures back off (up to 5 s) so a sick server is not hammered.
      const delay = err ? Math.min(5000, 250 * 2 ** Math.min(failures, 5)) : 0;
      setTimeout(() => void start(), delay).unref();
    };
    const start = async (): Promise<void> => {
      if (stopped) return;
      if (!resourceVersion) {
        const listStartedAt = Date.now();
        try {
          const list = await this.listPodsAt(labelSelector);
          resourceVersion = list.resourceVersion;
          if (stopped) return;
          onSync(list.items, listStartedAt);
        } catch (err) {
          return again(err);
        }
      }
      const query: Record<string, string | boolean> = { labelSelector, allowWatchBookmarks: true };
      if (resourceVersion) query.resourceVersion = resourceVersion;
      let sawEvent = false;
      watch
        .watch(
          `/api/v1/namespaces/${this.namespace}/pods`,
          query,
          (type, obj: V1Pod & { code?: number }) => {
            if (type === 'ERROR') {
              if (obj.code === 410) resourceVersion = undefined;
              return;
            }
            sawEvent = true;
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
            if (type !== 'BOOKMARK') onPod(type, obj);
          },
          (err: unknown) => {
            if (sawEvent || !err) failures = 0;
            if (statusOf(err).code === 410) resourceVersion = undefined;
            again(err);
          },
        )
        .then((c) => {
          controller = c;
          if (stopped) c.abort();
        })
        .catch(again);
    };
    void start();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}

/** Thrown through withRetry to stop it: the failure it carries must not be tried again. */
class FinalError extends Error {
  constructor(readonly inner: unknown) {
    super('final');
  }
}

/** The object found under our name is the one we sent: every label and annotation we gave it is there. */
export function isOurs(sent: ObjectMeta | undefined, found: ObjectMeta | undefined): boolean {
  if (!sent || !found || found.deletionTimestamp) return false;
  const same = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean => Object.entries(a ?? {}).every(([k, v]) => b?.[k] === v);
  return same(sent.labels, found.labels) && same(sent.annotations, found.annotations);
}

async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
