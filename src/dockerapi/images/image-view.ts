/**
 * The JSON clients read for images (inspect, list items): the record, completed by the image's
 * config when berth could read it from the registry.
 */
import type { ImageRecord } from '../model.js';
import { familiarImage, repositoryOf, tryNormalizeImage } from './image-ref.js';
import { since } from '../http/api-version.js';

/**
 * `docker image inspect` as a client of API `version` reads it: from 1.52 the config leaves out what is not set
 * (Cmd, Entrypoint, Env, Labels, User, WorkingDir) and Parent when empty, as dockerd 29 follows the OCI config.
 */
export function inspectImage(i: ImageRecord, architecture: string, version: string): Record<string, unknown> {
  const info = i.info;
  const c = info?.config ?? {};
  const omitsUnset = since(version, '1.52');
  const field = <T>(name: string, value: T | undefined, unset: T): Record<string, T> =>
    value !== undefined ? { [name]: value } : omitsUnset ? {} : { [name]: unset };
  return {
    Id: i.id,
    ...repoNames(imageReferences(i)),
    ...(omitsUnset ? {} : { Parent: '' }),
    Created: info?.created ?? i.created.toISOString(),
    Architecture: info?.architecture ?? architecture,
    Os: info?.os ?? 'linux',
    Size: 0,
    Config: {
      ...field('User', c.User, ''),
      ExposedPorts: c.ExposedPorts ?? null,
      ...field('Env', c.Env, []),
      ...field<string[] | null>('Cmd', c.Cmd, null),
      ...field<string[] | null>('Entrypoint', c.Entrypoint, null),
      ...field('WorkingDir', c.WorkingDir, ''),
      ...field('Labels', c.Labels, {}),
      ...(c.Healthcheck ? { Healthcheck: c.Healthcheck } : {}),
      ...(c.StopSignal ? { StopSignal: c.StopSignal } : {}),
    },
    RootFS: { Type: 'layers', Layers: [] },
  };
}

/**
 * A list item; `references`: the ones to show (a reference filter shows those it matches), else all; `containers`:
 * how many containers use it, which dockerd counts from API 1.51 (-1 before). VirtualSize went in 1.44.
 */
export function imageListItem(i: ImageRecord, version: string, containers: number, references = imageReferences(i)): Record<string, unknown> {
  return {
    Id: i.id,
    ParentId: '',
    ...repoNames(references),
    Created: Math.floor(imageCreatedMs(i) / 1000),
    Size: 0,
    SharedSize: -1,
    ...(since(version, '1.44') ? {} : { VirtualSize: 0 }),
    Labels: i.info?.config.Labels ?? {},
    Containers: since(version, '1.51') ? containers : -1,
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
