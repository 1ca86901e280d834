// Events as the kubelet and the scheduler record them, written into the store. Repeats of the same
// reason and message for the same object bump count and lastTimestamp instead of piling up.
import type { KubeObject, ObjectStore } from '../types.js';
import { resourceByKind } from '../api/resources.js';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly seen = new Map<string, string>();
  private lastNs = 0n;
  private readonly rt = resourceByKind('Event');

  constructor(
    private readonly store: ObjectStore,
    private readonly host: string,
  ) {}

  record(pod: KubeObject, type: EventType, reason: string, message: string, opts: { fieldPath?: string; component?: string } = {}): void {
    const ns = pod.metadata.namespace ?? 'default';
    const component = opts.component ?? 'kubelet';
    const key = `${pod.metadata.uid}|${opts.fieldPath ?? ''}|${reason}|${message}`;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    try {
      const existing = this.seen.get(key);
      if (existing && this.store.tryGet(this.rt, ns, existing)) {
        this.store.mutate(this.rt, ns, existing, (ev) => {
          ev.count = (ev.count ?? 1) + 1;
          ev.lastTimestamp = now;
        });
        return;
      }
      const involvedObject: any = { kind: pod.kind ?? 'Pod', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, apiVersion: 'v1', resourceVersion: pod.metadata.resourceVersion };
      if (opts.fieldPath) involvedObject.fieldPath = opts.fieldPath;
      const name = `${pod.metadata.name}.${this.uniqueNs().toString(16)}`;
      this.store.create(this.rt, ns, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: ns },
        involvedObject,
        reason,
        message,
        source: component === 'kubelet' ? { component, host: this.host } : { component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: component,
        reportingInstance: component === 'kubelet' ? this.host : '',
      });
      this.seen.set(key, name);
    } catch {
      // events are best effort, as in a real cluster
    }
  }

  /**
   * The kubelet names an event `<object>.<hex of the time in ns>` (client-go's recorder): a list, in name order
   * as the store keeps it, is then in the order things happened, which `kubectl describe` relies on for events
   * of the same second. Strictly increasing here, so two events of one instant keep their order.
   */
  private uniqueNs(): bigint {
    const ns = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
    this.lastNs = ns > this.lastNs ? ns : this.lastNs + 1n;
    return this.lastNs;
  }

  /** forget a pod's events (it is gone) so the map does not grow for ever */
  forget(uid: string): void {
    for (const k of this.seen.keys()) if (k.startsWith(`${uid}|`)) this.seen.delete(k);
  }
}

export const containerFieldPath = (init: boolean, name: string) => `spec.${init ? 'initContainers' : 'containers'}{${name}}`;
