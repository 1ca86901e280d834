/** Containers: create, list, inspect, the lifecycle (start, stop, kill, restart, wait, remove), top. */
import { DockerError, badRequest, conflict, type Router } from '../http/http.js';
import { parseFilters } from '../filters/filters.js';
import { containerListFilter } from '../filters/container-filters.js';
import { pruneFilter } from '../filters/prune-filters.js';
import { checkBody } from '../http/request-bodies.js';
import { checkCreateValues } from '../containers/create-checks.js';
import { parseSignal } from '../containers/signals.js';
import type { CreateBody } from '../model.js';
import { inspectContainer, listItem } from '../containers/container-view.js';
import type { Engine } from '../engine.js';
import { parseSnapshot, SNAPSHOT_SCRIPT } from '../containers/proc-snapshot.js';
import { psColumns, topTable } from '../containers/top.js';
import { parsePlatform } from '../containers/platform.js';

export function containerRoutes(r: Router, engine: Engine): void {
  r.op('ContainerCreate', 'POST', '/containers/create', async (call) => {
    const body = checkBody<CreateBody>('create', await call.json(false));
    checkCreateValues(body);
    // Checked before anything is recorded: a missing or unfit template is a 400 at create, not at start.
    if (body && typeof body === 'object') await engine.podTemplateFor(body.Labels);
    await engine.images.prepare(body?.Image);
    const platform = parsePlatform(call.query.get('platform'));
    const c = await engine.create(call.query.get('name'), body, platform);
    call.send(201, { Id: c.id, Warnings: c.warnings ?? [] });
  });
  r.op('ContainerList', 'GET', '/containers/json', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const wanted = containerListFilter(filters, { container: (ref) => engine.container(ref), networkName: (id) => engine.networks.get(id)?.name });
    const limit = call.int('limit') ?? -1;
    // `docker ps -n N` and `-l` list the newest containers of every state, and so does a `status` filter, as
    // dockerd does (not `exited`: `docker ps --filter exited=0` needs -a there too)
    const all = call.flag('all') || limit > 0 || filters.has('status');
    let list = [...engine.containers.values()]
      .sort((a, b) => b.created.getTime() - a.created.getTime())
      .filter((c) => (all || c.status === 'running') && wanted(c));
    if (limit > 0) list = list.slice(0, limit);
    call.send(
      200,
      list.map((c) => listItem(c, engine.networks.records, engine.mountsOf(c), call.version)),
    );
  });
  r.op('ContainerPrune', 'POST', '/containers/prune', async (call) => {
    const wanted = pruneFilter(parseFilters(call.query.get('filters')));
    const deleted: string[] = [];
    for (const c of [...engine.containers.values()]) {
      if (c.status === 'running' || !wanted({ labels: c.body.Labels ?? {}, created: c.created })) continue;
      await engine.remove(c.id, true);
      deleted.push(c.id);
    }
    call.send(200, { ContainersDeleted: deleted, SpaceReclaimed: 0 });
  });
  r.op('ContainerInspect', 'GET', '/containers/{id}/json', (call, [id]) => {
    const c = engine.container(id);
    call.send(200, inspectContainer(c, engine.networks.records, engine.mountsOf(c), call.version));
  });
  r.op('ContainerStart', 'POST', '/containers/{id}/start', async (call, [id]) => {
    const res = await engine.start(id);
    call.send(res === 'already' ? 304 : 204);
  });
  r.op('ContainerStop', 'POST', '/containers/{id}/stop', async (call, [id]) => {
    const t = call.int('t') ?? call.int('timeout');
    const signal = call.query.get('signal');
    const res = await engine.stop(id, t, signal ? parseSignal(signal) : undefined);
    call.send(res === 'already' ? 304 : 204);
  });
  r.op('ContainerRestart', 'POST', '/containers/{id}/restart', async (call, [id]) => {
    await engine.restart(id, call.int('t'));
    call.send(204);
  });
  r.op('ContainerKill', 'POST', '/containers/{id}/kill', async (call, [id]) => {
    await engine.kill(id, parseSignal(call.query.get('signal') || 'KILL'));
    call.send(204);
  });
  r.op('ContainerDelete', 'DELETE', '/containers/{id}', async (call, [id]) => {
    await engine.remove(id, call.flag('force'), call.flag('v'));
    call.send(204);
  });
  r.op('ContainerRename', 'POST', '/containers/{id}/rename', async (call, [id]) => {
    const name = call.query.get('name');
    if (!name) throw badRequest('name is required');
    await engine.rename(id, name);
    call.send(204);
  });
  r.op('ContainerResize', 'POST', '/containers/{id}/resize', (call, [id]) => {
    engine.container(id);
    call.int('h');
    call.int('w');
    call.send(200);
  });
  r.op('ContainerTop', 'GET', '/containers/{id}/top', async (call, [id]) => {
    const c = engine.container(id);
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    // checked before anything runs; `docker top c -o pid,args` sends `-o pid,args` as one value
    const columns = psColumns(call.query.get('ps_args') ?? '');
    const res = await engine.execCollect(c, ['/bin/sh', '-c', SNAPSHOT_SCRIPT]);
    const snapshot = res.exitCode === 0 ? parseSnapshot(res.stdout) : undefined;
    if (!snapshot)
      throw new DockerError(
        500,
        `reading the processes of container ${c.name} from its /proc failed: ${res.stderr.trim() || `exit ${res.exitCode}`} (top needs sh and cat in the image)`,
      );
    call.send(200, topTable(snapshot, columns));
  });
  r.op('ContainerWait', 'POST', '/containers/{id}/wait', async (call, [id]) => {
    const c = engine.container(id);
    const condition = call.query.get('condition') ?? 'not-running';
    if (!['not-running', 'next-exit', 'removed'].includes(condition)) throw badRequest(`invalid condition: "${condition}"`);
    const out = call.startChunked('application/json');
    const abort = new AbortController();
    void call.clientGone().then(() => abort.abort());
    const result = await engine.wait(c, condition, abort.signal);
    out.end(`${JSON.stringify(result)}\n`);
  });
}
