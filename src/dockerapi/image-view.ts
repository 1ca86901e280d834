/**
 * The JSON clients read for images (inspect, list items): the record, completed by the image's
 * config when berth could read it from the registry.
 */
import type { ImageRecord } from './model.js';
import { familiarImage } from './image-ref.js';

export function inspectImage(i: ImageRecord, architecture: string): Record<string, unknown> {
  const info = i.info;
  const c = info?.config ?? {};
  return {
    Id: i.id,
    RepoTags: [...i.tags].filter((t) => !t.includes('@')).map(familiarImage),
    RepoDigests: repoDigests(i),
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

export function imageListItem(i: ImageRecord): Record<string, unknown> {
  const created = i.info?.created ? Date.parse(i.info.created) : i.created.getTime();
  return {
    Id: i.id,
    ParentId: '',
    RepoTags: [...i.tags].filter((t) => !t.includes('@')).map(familiarImage),
    RepoDigests: repoDigests(i),
    Created: Math.floor((Number.isFinite(created) ? created : i.created.getTime()) / 1000),
    Size: 0,
    SharedSize: -1,
    VirtualSize: 0,
    Labels: i.info?.config.Labels ?? {},
    Containers: -1,
  };
}

/** The registry's digest when berth read it, and the names pulled by digest. */
function repoDigests(i: ImageRecord): string[] {
  const pulled = [...i.tags].filter((t) => t.includes('@')).map((t) => familiarImage(t).replace(/:[^/@]*@/, '@'));
  return [...new Set([...(i.info ? [i.info.repoDigest] : []), ...pulled])];
}
