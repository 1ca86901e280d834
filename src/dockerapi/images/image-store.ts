/**
 * Images are records of pulls: the kubelet pulls for real when a pod starts. A record carries the
 * image's config when its registry gives it (image-config.ts), so create can merge it as dockerd does.
 */
import { notFound } from '../http/http.js';
import { isReaperImage } from '../ryuk/reaper.js';
import { imageId, type ImageRecord } from '../model.js';
import { familiarImage, normalizeImage, repositoryOf, tryNormalizeImage } from './image-ref.js';
import type { ImageConfigSource, ImageInfo, ImageLookup } from './image-config.js';
import type { EventBus } from '../event-bus.js';

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
    const norm = tryNormalizeImage(ref);
    for (const img of this.records.values())
      if (
        (norm !== undefined && img.tags.has(norm)) ||
        img.id === ref ||
        img.id === `sha256:${ref}` ||
        (ref.length >= 12 && img.id.startsWith(`sha256:${ref}`))
      )
        return img;
    throw notFound(`No such image: ${ref}`);
  }

  /**
   * Records a pull (every pull is an event, as dockerd's: a re-pull too, named in the familiar form, with the
   * image's labels among its attributes as far as berth knows its config: `docker events --filter label=…`).
   */
  pull(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    const img = this.remember(norm);
    this.bus.emit('image', 'pull', { id: familiarImage(norm), name: familiarImage(repositoryOf(norm)), body: { Labels: img.info?.config.Labels } });
    return img;
  }

  /** The record of `ref`, made if there is none, without a pull event: a container of an earlier berth names its image, or a pull reads the config before its event. */
  remember(ref: string): ImageRecord {
    const norm = normalizeImage(ref);
    return [...this.records.values()].find((i) => i.tags.has(norm)) ?? this.add(norm);
  }

  private add(norm: string): ImageRecord {
    const id = imageId(norm);
    const img: ImageRecord = { id, ref: norm, tags: new Set([norm]), created: new Date() };
    this.records.set(id, img);
    return img;
  }

  /**
   * An image berth made (`docker commit`, `docker build`): known by its id and the names given, pulled by its pushed
   * digest. Each name moves to it from any other image, as a tag does in dockerd.
   */
  addMade(made: { id: string; pullRef: string; names: string[]; info: ImageInfo; servedBy?: string; release(): Promise<void> }): ImageRecord {
    const names = made.names.map(normalizeImage);
    for (const other of this.records.values()) for (const n of names) other.tags.delete(n);
    const img: ImageRecord = {
      id: made.id,
      ref: names[0] ?? made.pullRef,
      tags: new Set(names),
      created: new Date(),
      info: made.info,
      pullRef: made.pullRef,
      ...(made.servedBy ? { servedBy: made.servedBy } : {}),
      release: made.release,
    };
    this.records.set(made.id, img);
    return img;
  }

  /** Deletes what berth pushed for the images it made (berth serve's shutdown). */
  async releaseMade(): Promise<void> {
    await Promise.all([...this.records.values()].map((i) => i.release?.()));
  }

  /**
   * The pod serving a made image ended or went (its --ttl passed, its node was lost, someone deleted it): the image can
   * no longer be pulled, so it is deleted as `docker rmi` would, rather than listed while no container of it can start.
   * Its names (its short id when it has none), for the line that says so; none when no image was served by that pod.
   */
  servingEnded(pod: string): string[] {
    const img = [...this.records.values()].find((i) => i.servedBy === pod);
    if (!img) return [];
    this.drop(img);
    return img.tags.size ? [...img.tags].map(familiarImage) : [img.id.replace('sha256:', '').slice(0, 12)];
  }

  tag(ref: string, repo: string, tag: string): void {
    this.find(ref).tags.add(normalizeImage(`${repo}:${tag}`));
  }

  /** `docker rmi`: untags the name given while others remain, else deletes the record. */
  remove(ref: string): Array<Record<string, string>> {
    const img = this.find(ref);
    const norm = tryNormalizeImage(ref);
    const out: Array<Record<string, string>> = [];
    if (norm !== undefined && img.tags.has(norm) && img.tags.size > 1) {
      img.tags.delete(norm);
      out.push({ Untagged: familiarImage(norm) });
      return out;
    }
    for (const t of img.tags) out.push({ Untagged: familiarImage(t) });
    out.push({ Deleted: img.id });
    this.drop(img);
    return out;
  }

  private drop(img: ImageRecord): void {
    this.records.delete(img.id);
    void img.release?.();
    this.bus.emit('image', 'delete', { id: img.id, name: familiarImage(img.ref) });
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
