/**
 * Images are records of pulls: the kubelet pulls for real when a pod starts. A record carries the
 * image's config when its registry gives it (image-config.ts), so create can merge it as dockerd does.
 */
import { notFound } from './http.js';
import { isReaperImage } from './reaper.js';
import { normalizeImage, shortHash, type ImageRecord } from './model.js';
import type { ImageConfigSource, ImageLookup } from './image-config.js';
import type { EventBus } from './event-bus.js';

export class ImageStore {
  readonly records = new Map<string, ImageRecord>();

  constructor(
    private readonly bus: EventBus,
    /** Reads image configs from registries; undefined: images stay records (--no-image-config). */
    private readonly configs: ImageConfigSource | undefined,
  ) {}

  get size(): number {
    return this.records.size;
  }

  values(): IterableIterator<ImageRecord> {
    return this.records.values();
  }

  /** By reference (as Docker normalizes it), full id, or id prefix of 12+ characters; 404 otherwise. */
  find(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    for (const img of this.records.values()) if (img.tags.has(norm) || img.id === ref || img.id === `sha256:${ref}` || (ref.length >= 12 && img.id.startsWith(`sha256:${ref}`))) return img;
    throw notFound(`No such image: ${ref}`);
  }

  /** Records a pull (an event when the image was not known). */
  pull(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    const existing = [...this.records.values()].find((i) => i.tags.has(norm));
    if (existing) return existing;
    this.bus.emit('image', 'pull', { id: norm, name: norm });
    return this.add(norm);
  }

  /** A container of an earlier berth names its image: known again, without a pull event. */
  remember(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    return [...this.records.values()].find((i) => i.tags.has(norm)) ?? this.add(norm);
  }

  private add(norm: string): ImageRecord {
    const id = `sha256:${shortHash(norm, 64)}`;
    const img: ImageRecord = { id, ref: norm, tags: new Set([norm]), created: new Date() };
    this.records.set(id, img);
    return img;
  }

  tag(ref: string, repo: string, tag: string): void {
    this.find(ref).tags.add(`${repo}:${tag}`);
  }

  /** `docker rmi`: untags the name given while others remain, else deletes the record. */
  remove(ref: string): Array<Record<string, string>> {
    const img = this.find(ref);
    const norm = [...img.tags].find((t) => t === ref || t === `${ref}:latest`);
    const out: Array<Record<string, string>> = [];
    if (norm && img.tags.size > 1) {
      img.tags.delete(norm);
      out.push({ Untagged: norm });
      return out;
    }
    for (const t of img.tags) out.push({ Untagged: t });
    out.push({ Deleted: img.id });
    this.records.delete(img.id);
    return out;
  }

  /** Reads the image's config from its registry: again on every pull, once before a create. */
  async readConfig(img: ImageRecord, fresh: boolean): Promise<ImageLookup | undefined> {
    if (!this.configs || isReaperImage(img.ref)) return undefined;
    const found = await this.configs.lookUp(img.ref, fresh);
    if ('info' in found) img.info = found.info;
    return found;
  }

  /** Before create: the config of a pulled image not yet looked up (an unknown image is create's 404). */
  async prepare(ref: unknown): Promise<void> {
    if (typeof ref !== 'string') return;
    let img: ImageRecord;
    try {
      img = this.find(ref);
    } catch {
      return;
    }
    if (!img.info) await this.readConfig(img, false);
  }
}
