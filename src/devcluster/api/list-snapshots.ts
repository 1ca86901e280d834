// The rest of a paged list as it was at its first page. A real server serves every page of a list at the
// resourceVersion of its first (etcd keeps the revision): objects made or deleted between pages do not show,
// or go missing, in the pages that follow. The dev cluster keeps what the later pages will serve instead, for
// as long as etcd's compaction would keep the revision (5 minutes) and for at most MAX_KEPT lists at once;
// a page asked for after that is a 410, as after a compaction.
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../types.js';

const KEEP_MS = 5 * 60_000;
const MAX_KEPT = 64;

export class ListSnapshots {
  private readonly kept = new Map<string, { items: KubeObject[]; until: number }>();

  /** keeps `items` (already copies) for the pages after the first; returns the id the continue token carries */
  keep(items: KubeObject[], now = Date.now()): string {
    this.prune(now);
    while (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    const id = randomBytes(8).toString('hex');
    this.kept.set(id, { items, until: now + KEEP_MS });
    return id;
  }

  /** the items kept under `id`, or undefined when they are gone (expired, or pushed out by newer lists) */
  get(id: string, now = Date.now()): KubeObject[] | undefined {
    this.prune(now);
    return this.kept.get(id)?.items;
  }

  /** the last page was served */
  drop(id: string): void {
    this.kept.delete(id);
  }

  private prune(now: number): void {
    for (const [id, k] of this.kept) if (k.until <= now) this.kept.delete(id);
  }
}
