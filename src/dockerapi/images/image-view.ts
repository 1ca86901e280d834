/**
 * The JSON clients read for images (inspect, list items): the record, completed by the image's
 * config when berth could read it from the registry.
 */
import type { ImageRecord } from '../model.js';
import { familiarImage, repositoryOf, tryNormalizeImage } from './image-ref.js';

export function inspectImage(i: ImageRecord, architecture: string): Record<string, unknown> {
  const info = i.info;
  const c = info?.config ?? {};
  return {
    Id: i.id,
    ...repoNames(imageReferences(i)),
    Parent: '',
    Created: info?.created ?? i.created.toISOString(),
    Architecture: info?.architecture ?? architecture,
    Os: info?.os ?? 'linux',
    Size: 0,
    Config: {
      User: c.User ?? '',
      ExposedPorts: c.ExposedPorts ?? null,
      Env: c.Env ?? [],
      Cmd: c.Cmd ?? null,
      Entrypoint: c.Entrypoint ?? null,
      WorkingDir: c.WorkingDir ?? '',
      Labels: c.Labels ?? {},
      ...(c.Healthcheck ? { Healthcheck: c.Healthcheck } : {}),
      ...(c.StopSignal ? { StopSignal: c.StopSignal } : {}),
    },
    RootFS: { Type: 'layers', Layers: [] },
  };
}

/** A list item; `references`: the ones to show (a reference filter shows those it matches), else all. */
export function imageListItem(i: ImageRecord, references = imageReferences(i)): Record<string, unknown> {
  return {
    Id: i.id,
    ParentId: '',
    ...repoNames(references),
    Created: Math.floor(imageCreatedMs(i) / 1000),
    Size: 0,
    SharedSize: -1,
    VirtualSize: 0,
    Labels: i.info?.config.Labels ?? {},
    Containers: -1,
  };
}

/** When the image was made, as lists show it and filter by it: its config's date, else when berth recorded it. */
export function imageCreatedMs(i: ImageRecord): number {
  const created = i.info?.created ? Date.parse(i.info.created) : NaN;
  return Number.isFinite(created) ? created : i.created.getTime();
}

/**
 * Every name of the image, canonical: its tags, and its digests — the registry's when berth read it, and the
 * names pulled by digest (`name:tag@digest` as `name@digest`, as dockerd keeps such a pull).
 */
export function imageReferences(i: ImageRecord): string[] {
  const registry = i.info && (tryNormalizeImage(i.info.repoDigest) ?? i.info.repoDigest);
  const pulled = [...i.tags].map((t) => (t.includes('@') ? `${repositoryOf(t)}${t.slice(t.indexOf('@'))}` : t));
  return [...new Set([...(registry ? [registry] : []), ...pulled])];
}

/** A tag, not a digest: what makes an image not dangling. */
export const isTag = (reference: string): boolean => !reference.includes('@');

function repoNames(references: string[]): { RepoTags: string[]; RepoDigests: string[] } {
  return { RepoTags: references.filter(isTag).map(familiarImage), RepoDigests: references.filter((r) => !isTag(r)).map(familiarImage) };
}
