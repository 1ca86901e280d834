// Images come from podman's local store only: the dev cluster has no registry to pull from, so "pulling"
// is looking the image up, and a missing image is a pull failure the user fixes with `podman build`/`load`.
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
