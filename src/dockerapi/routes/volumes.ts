/** Volumes: PersistentVolumeClaims (../volumes.ts). */
import type { Router } from '../http/http.js';
import { parseFilters } from '../filters/filters.js';
import { volumeListFilter } from '../filters/volume-filters.js';
import { volumePruneFilter } from '../filters/prune-filters.js';
import { checkBody } from '../http/request-bodies.js';
import { newId } from '../model.js';
import { refuseDriverSettings } from '../volumes/volumes.js';
import type { Engine } from '../engine.js';

export function volumeRoutes(r: Router, engine: Engine): void {
  r.op('VolumeList', 'GET', '/volumes', (call) => {
    const wanted = volumeListFilter(parseFilters(call.query.get('filters')), (name) => engine.volumes.usersOf(name).length > 0);
    const list = [...engine.volumes.values()].filter(wanted);
    call.send(200, { Volumes: list.map((v) => volumeJson(engine, v.name)), Warnings: [] });
  });
  r.op('VolumeCreate', 'POST', '/volumes/create', async (call) => {
    const body = checkBody<{ Name?: string; Driver?: string; DriverOpts?: Record<string, string> | null; Labels?: Record<string, string> | null }>(
      'volumeCreate',
      (await call.json()) ?? {},
    );
    refuseDriverSettings(body.Driver, body.DriverOpts, { driver: '-d (--driver)', options: '-o (--opt)' });
    const name = body.Name || newId();
    if (!engine.volumes.has(name)) await engine.volumes.ensure(name, body.Labels ?? {});
    call.send(201, volumeJson(engine, name));
  });
  r.op('VolumeInspect', 'GET', '/volumes/{name}', (call, [name]) => call.send(200, volumeJson(engine, name)));
  r.op('VolumeDelete', 'DELETE', '/volumes/{name}', async (call, [name]) => {
    await engine.volumes.remove(name, call.flag('force'));
    call.send(204);
  });
  r.op('VolumePrune', 'POST', '/volumes/prune', async (call) => {
    const wanted = volumePruneFilter(parseFilters(call.query.get('filters')), call.version);
    const deleted: string[] = [];
    for (const v of [...engine.volumes.values()]) {
      // used by a container in any state: kept, as dockerd keeps a volume with references
      if (!wanted(v.labels) || engine.volumes.usersOf(v.name).length) continue;
      try {
        await engine.volumes.remove(v.name, false);
        deleted.push(v.name);
      } catch (err) {
        // as dockerd: the prune goes on and answers what it removed
        process.stderr.write(`berth serve: volume prune could not remove volume ${v.name}: ${(err as Error).message}\n`);
      }
    }
    call.send(200, { VolumesDeleted: deleted, SpaceReclaimed: 0 });
  });
}

function volumeJson(engine: Engine, name: string): Record<string, unknown> {
  const v = engine.volumes.find(name);
  return {
    Name: v.name,
    Driver: 'local',
    Mountpoint: engine.volumes.mountpoint(v.name),
    CreatedAt: v.created.toISOString(),
    Labels: v.labels,
    Scope: 'local',
    Options: {},
  };
}
