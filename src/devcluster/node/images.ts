// Images come from podman's local store only: the dev cluster has no registry to pull from, so "pulling"
// is looking the image up, and a missing image is a pull failure the user fixes with `podman build`/`load`.
import { statSync } from 'node:fs';
import { pathKindInImage, type PathKind } from './image-files.js';
import type { PodmanCli } from './podman-cli.js';
import { podmanMessage } from './podman-cli.js';

export interface ImageInfo {
  id: string;
  /** Config.User: '', 'root', '1000', 'nobody:nogroup' */
  user: string;
  /** for status.imageID: a repo digest when podman has one, else sha256:<id> */
  imageRef: string;
}

export type ImageLookup = { found: true; image: ImageInfo } | { found: false; message: string };

export async function lookupImage(cli: PodmanCli, image: string): Promise<ImageLookup> {
  const r = await cli.run(['image', 'inspect', '--format', 'json', image], 20_000);
  if (r.code !== 0) return { found: false, message: podmanMessage(r) || 'not found' };
  try {
    const info = JSON.parse(r.stdout)[0];
    const repoDigest: string | undefined = info.RepoDigests?.[0];
    return { found: true, image: { id: info.Id, user: info.Config?.User ?? '', imageRef: repoDigest ?? `sha256:${info.Id}` } };
  } catch (err) {
    return { found: false, message: String(err) };
  }
}

/** the API server's default: Always for `:latest` or no tag, IfNotPresent otherwise */
export function pullPolicy(container: any): string {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  const image: string = container.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const lastPart = image.split('/').pop() ?? '';
  const tag = lastPart.includes(':') ? lastPart.split(':').pop() : undefined;
  return !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

export function pullFailureMessage(image: string, detail: string): string {
  return `failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found (berth dev-cluster pulls from no registry; build or load the image into podman's local store: ${detail})`;
}

/**
 * Lookups of images found, kept until podman's image store changes. containers/storage rewrites its
 * images.json on every build, tag, load and removal, so a changed stat of that file is a precise and cheap
 * invalidation; missing images are never kept, so a `podman build` during a back-off is seen on the next try.
 */
export class ImageCache {
  private readonly found = new Map<string, ImageInfo>();
  /** lookups under way, by store stamp and image */
  private readonly inFlight = new Map<string, Promise<ImageLookup>>();
  /** by image id and path: an image's files never change under its id */
  private readonly pathKinds = new Map<string, Promise<PathKind | undefined>>();
  private storeStamp?: string;

  /** storeFile: `<graphRoot>/<driver>-images/images.json`; undefined turns caching off */
  constructor(
    private readonly cli: PodmanCli,
    private readonly storeFile: string | undefined,
  ) {}

  async lookup(image: string): Promise<ImageLookup> {
    const before = this.stamp();
    if (before === undefined || before !== this.storeStamp) {
      this.found.clear();
      this.storeStamp = before;
    }
    const cached = this.found.get(image);
    if (cached) return { found: true, image: cached };
    // Pods started together ask for the same image together: one podman process answers them all (50 at
    // once, each a podman start on a busy machine, ran into the lookup's timeout).
    const key = `${before} ${image}`;
    let asked = this.inFlight.get(key);
    if (!asked) {
      asked = lookupImage(this.cli, image).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, asked);
    }
    const result = await asked;
    // kept only when the store did not change while podman was reading it
    if (result.found && before !== undefined && this.stamp() === before && this.storeStamp === before) this.found.set(image, result.image);
    return result;
  }

  /** what `path` is in the image's filesystem; undefined when podman could not tell */
  pathKind(image: ImageInfo, path: string): Promise<PathKind | undefined> {
    const key = `${image.id}\0${path}`;
    let kind = this.pathKinds.get(key);
    if (!kind) {
      kind = pathKindInImage(this.cli, image.id, path);
      this.pathKinds.set(key, kind);
      // an answer podman could not give is asked again next time
      void kind.then((k) => k === undefined && this.pathKinds.delete(key));
    }
    return kind;
  }

  /** what was read about `image` may be stale (podman could not use it) */
  forget(image: string): void {
    this.found.delete(image);
  }

  private stamp(): string | undefined {
    if (!this.storeFile) return undefined;
    try {
      const s = statSync(this.storeFile);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return undefined;
    }
  }
}
