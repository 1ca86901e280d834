// PersistentVolumeClaims as a one-node cluster with a default dynamic provisioner serves them: a claim
// without a storage class is provisioned and bound at once (Immediate binding) to a volume named
// pvc-<uid>, a directory of the node; a claim that names a class stays Pending (the dev cluster has no
// StorageClass objects, so no class is found), as it would on a cluster without that class. Deleting a
// claim a pod still uses waits for the pod (the kubernetes.io/pvc-protection finalizer); once the claim
// is gone, so is its volume's data (reclaim policy Delete, a provisioned volume's default).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, ObjectStore, WatchEvent } from '../types.js';
import type { EventRecorder } from './events.js';

export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
const PVC = resourceByKind('PersistentVolumeClaim');
const POD = resourceByKind('Pod');

/** the directory of a claim's volume: one per claim object, so a claim deleted and made again starts empty */
export function claimVolumeDir(claimsDir: string, claim: KubeObject): string {
  return join(claimsDir, claim.spec?.volumeName || `pvc-${claim.metadata.uid}`);
}

export class ClaimController {
  constructor(
    private readonly store: ObjectStore,
    private readonly events: EventRecorder,
    private readonly claimsDir: string,
    /** a claim was bound: pods waiting for it get another try */
    private readonly bound: () => void,
  ) {}

  onClaim(event: WatchEvent): void {
    const claim = event.object;
    if (event.type === 'DELETED') {
      rmSync(claimVolumeDir(this.claimsDir, claim), { recursive: true, force: true });
      return;
    }
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
    if (claim.metadata.deletionTimestamp) this.release(claim);
    else if (claim.status?.phase !== 'Bound') this.bind(claim);
  }

  /** pods ended or went: claims waiting to be deleted may go now */
  onPodsChanged(): void {
    for (const claim of this.store.list(PVC, undefined).items) if (claim.metadata.deletionTimestamp) this.release(claim);
  }

  private bind(event: KubeObject): void {
    const ns = event.metadata.namespace!;
    const name = event.metadata.name!;
    // the event may be older than the claim: act on the claim as it is now
    const claim = this.store.tryGet(PVC, ns, name);
    if (!claim || claim.metadata.uid !== event.metadata.uid || claim.metadata.deletionTimestamp || claim.status?.phase === 'Bound') return;
    const storageClass: string | undefined | null = claim.spec?.storageClassName;
    if (storageClass !== undefined && storageClass !== null) {
      const message = storageClass === '' ? 'no persistent volumes available for this claim and no storage class is set' : `storageclass.storage.k8s.io "${storageClass}" not found`;
      this.events.record(claim, 'Warning', storageClass === '' ? 'FailedBinding' : 'ProvisioningFailed', message, { component: 'persistentvolume-controller' });
      return;
    }
    const volumeName = `pvc-${claim.metadata.uid}`;
    const sameUid = (o: KubeObject): void => {
      if (o.metadata.uid !== claim.metadata.uid) throw new Error('claim was replaced');
    };
    this.store.mutate(PVC, ns, name, (o) => {
      sameUid(o);
      o.spec.volumeName = volumeName;
      o.metadata.annotations = { ...(o.metadata.annotations ?? {}), 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
    });
    this.store.mutate(
      PVC,
      ns,
      name,
      (o) => {
        sameUid(o);
        o.status = { phase: 'Bound', accessModes: o.spec?.accessModes ?? [], capacity: { storage: o.spec?.resources?.requests?.storage ?? '0' } };
      },
      { subresource: 'status' },
    );
    this.bound();
  }

  /** the pvc-protection controller: the finalizer goes once no pod that may still run names the claim */
  private release(claim: KubeObject): void {
    if (!claim.metadata.finalizers?.includes(PVC_PROTECTION)) return;
    const ns = claim.metadata.namespace!;
    const name = claim.metadata.name!;
    const inUse = this.store
      .list(POD, ns)
      .items.some((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && (p.spec?.volumes ?? []).some((v: any) => v?.persistentVolumeClaim?.claimName === name));
    if (inUse) return;
    const current = this.store.tryGet(PVC, ns, name);
    if (!current || current.metadata.uid !== claim.metadata.uid) return;
    const left = (current.metadata.finalizers ?? []).filter((f: string) => f !== PVC_PROTECTION);
    if (left.length) this.store.mutate(PVC, ns, name, (o) => void (o.metadata.finalizers = left));
    else this.store.remove(PVC, ns, name);
  }
}
