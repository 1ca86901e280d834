/**
 * Docker Engine API endpoints → Engine calls, with the wire details clients depend on (headers sent
 * at once on wait/logs/events/pulls, multiplexed frames, hijacked attach and exec, empty PUT body).
 */
import os from 'node:os';
import { PassThrough, type Writable } from 'node:stream';
import { ArchiveError, sanitizeArchive, goFileMode, DEFAULT_MAX_ARCHIVE_BYTES } from '../runtime/files.js';
import { SandboxPlanError } from '../runtime/sandbox-plan.js';
import { PodTemplateError } from '../runtime/pod-template.js';
import type { LogQuery } from '../runtime/sandbox.js';
import { KubeError } from '../kube/errors.js';
import type { Engine } from './engine.js';
import { imageListItem, inspectImage } from './image-view.js';
import { FilterError, anyMatches, checkKeys, labelsMatch, parseFilters, patternMatchers } from './filters.js';
import { checkBody } from './request-bodies.js';
import { checkCreateValues } from './create-checks.js';
import { parseSignal } from './signals.js';
import { STDERR, STDOUT, frame, framedWriter } from './framing.js';
import { LogIncomplete, copyLog } from './log-copy.js';
import { API_VERSION, MIN_API_VERSION, DockerError, Router, badRequest, compareVersions, conflict, notFound, type Call, type OpenedStream } from './http.js';
import { inspectContainer, listItem, newId, type ContainerRecord, type CreateBody } from './model.js';
import { BERTH_VERSION } from '../cli/version.js';

interface ExecRecord {
  id: string;
  containerId: string;
  cmd: string[];
  env: string[];
  workingDir: string;
  user: string;
  tty: boolean;
  attachStdin: boolean;
  attachStdout: boolean;
  attachStderr: boolean;
  running: boolean;
  exitCode: number | null;
}

export function dockerRoutes(engine: Engine): Router {
  const r = new Router();
  const execs = new Map<string, ExecRecord>();

  // ---- system ----
  const ping = (call: Call): void => call.send(200, 'OK', { 'Cache-Control': 'no-cache, no-store, must-revalidate', Pragma: 'no-cache', 'Content-Type': 'text/plain; charset=utf-8' });
  r.add('GET', '/_ping', ping).add('HEAD', '/_ping', ping);
  r.add('GET', '/version', (call) =>
    call.send(200, {
      Platform: { Name: 'berth' },
      Components: [{ Name: 'Engine', Version: BERTH_VERSION, Details: { ApiVersion: API_VERSION, MinAPIVersion: MIN_API_VERSION, Os: 'linux', Arch: goArch() } }],
      Version: BERTH_VERSION,
      ApiVersion: API_VERSION,
      MinAPIVersion: MIN_API_VERSION,
      GitCommit: 'berth',
      GoVersion: `node${process.versions.node}`,
      Os: 'linux',
      Arch: goArch(),
      KernelVersion: os.release(),
      BuildTime: '',
    }),
  );
  r.add('GET', '/info', (call) => {
    const all = [...engine.containers.values()];
    call.send(200, {
      ID: engine.owner,
      Name: `berth-${engine.owner}`,
      ServerVersion: BERTH_VERSION,
      OperatingSystem: 'Kubernetes (berth)',
      OSType: 'linux',
      OSVersion: '',
      Architecture: os.arch() === 'x64' ? 'x86_64' : os.arch(),
      KernelVersion: os.release(),
      NCPU: os.cpus().length,
      MemTotal: os.totalmem(),
      IndexServerAddress: 'https://index.docker.io/v1/',
      Runtimes: { kubernetes: { path: 'kubernetes' } },
      DefaultRuntime: 'kubernetes',
      Driver: 'kubernetes',
      Labels: [],
      Containers: all.length,
      ContainersRunning: all.filter((c) => c.status === 'running').length,
      ContainersPaused: 0,
      ContainersStopped: all.filter((c) => c.status !== 'running').length,
      Images: engine.images.size,
      SecurityOptions: ['name=seccomp,profile=default'],
      Swarm: { LocalNodeState: 'inactive' },
      Plugins: { Volume: ['local'], Network: ['bridge', 'host', 'null'] },
    });
  });
  r.add('GET', '/events', async (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const until = call.query.get('until');
    if (until && !Number.isFinite(Number(until))) throw badRequest(`invalid value for until: "${until}" (give a unix timestamp in seconds)`);
    const out = call.startChunked('application/json');
    const onEvent = (e: { Type: string; Action: string; Actor: { ID: string; Attributes: Record<string, string> } }): void => {
      if (!anyMatches(filters.get('type'), (t) => t === e.Type)) return;
      if (!anyMatches(filters.get('event'), (t) => t === e.Action)) return;
      if (!anyMatches(filters.get('container'), (t) => e.Type === 'container' && (e.Actor.ID.startsWith(t) || e.Actor.Attributes.name === t))) return;
      out.write(`${JSON.stringify(e)}\n`);
    };
    engine.events.on('event', onEvent);
    const closed = new Promise<void>((resolve) => call.req.socket.once('close', () => resolve()));
    const timer = until ? new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, Number(until) * 1000 - Date.now())).unref()) : new Promise<void>(() => undefined);
    await Promise.race([closed, timer]);
    engine.events.off('event', onEvent);
    out.end();
  });

  // ---- images ----
  r.add('POST', '/images/create', async (call) => {
    const from = call.query.get('fromImage');
    if (!from) throw badRequest('fromImage is required (berth cannot import images)');
    const tag = call.query.get('tag');
    const ref = tag && !from.includes('@') && !/:[^/]*$/.test(from) ? `${from}${tag.startsWith('sha256:') ? '@' : ':'}${tag}` : from;
    if (!/^[a-z0-9][a-z0-9._\-/:@]*$/i.test(ref)) throw badRequest(`invalid reference format: ${ref}`);
    const out = call.startChunked('application/json');
    out.write(`${JSON.stringify({ status: `Pulling from ${ref.replace(/:[^/:]*$/, '')}`, id: ref.split(':').pop() })}\n`);
    const found = await engine.readImageConfig(engine.pull(ref), true);
    if (found && 'info' in found) out.write(`${JSON.stringify({ status: `Digest: ${found.info.repoDigest.split('@')[1]}` })}\n`);
    const config = !found ? '' : 'info' in found ? ' with its config from the registry' : ` (its config was not read: ${found.reason})`;
    out.write(`${JSON.stringify({ status: `Status: recorded ${ref}${config}; the cluster's kubelet pulls it when a container starts` })}\n`);
    out.end();
  });
  r.add('GET', '/images/json', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const list = [...engine.images.values()]
      .filter((i) => anyMatches(filters.get('reference'), (ref) => [...i.tags].some((t) => t === ref || t.startsWith(`${ref}:`))))
      .map(imageListItem);
    call.send(200, list);
  });
  r.add('GET', /^\/images\/(.+)\/json$/, (call, [name]) => {
    call.send(200, inspectImage(engine.image(name), goArch()));
  });
  r.add('POST', /^\/images\/(.+)\/tag$/, (call, [name]) => {
    const i = engine.image(name);
    const repo = call.query.get('repo');
    if (!repo) throw badRequest('repo is required');
    const tag = call.query.get('tag') || 'latest';
    i.tags.add(`${repo}:${tag}`);
    call.send(201);
  });
  r.add('DELETE', /^\/images\/(.+)$/, (call, [name]) => {
    const i = engine.image(name);
    const norm = [...i.tags].find((t) => t === name || t === `${name}:latest`);
    const out: Array<Record<string, string>> = [];
    if (norm && i.tags.size > 1) {
      i.tags.delete(norm);
      out.push({ Untagged: norm });
    } else {
      for (const t of i.tags) out.push({ Untagged: t });
      out.push({ Deleted: i.id });
      engine.images.delete(i.id);
    }
    call.send(200, out);
  });
  r.add('POST', '/images/prune', (call) => call.send(200, { ImagesDeleted: [], SpaceReclaimed: 0 }));

  // ---- containers ----
  r.add('POST', '/containers/create', async (call) => {
    const body = checkBody<CreateBody>('create', await call.json(false));
    checkCreateValues(body);
    // Checked before anything is recorded: a missing or unfit template is a 400 at create, not at start.
    if (body && typeof body === 'object') await engine.podTemplateFor(body.Labels);
    await engine.prepareImage(body?.Image);
    const c = engine.create(call.query.get('name'), body);
    call.send(201, { Id: c.id, Warnings: c.warnings ?? [] });
  });
  r.add('GET', '/containers/json', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    checkKeys(filters, ['label', 'name', 'id', 'status', 'ancestor', 'network', 'before', 'since', 'exited', 'health', 'volume', 'publish', 'expose', 'is-task']);
    const all = call.flag('all') || filters.has('status') || filters.has('exited');
    let list = [...engine.containers.values()].sort((a, b) => b.created.getTime() - a.created.getTime());
    const created = (ref: string): number => engine.container(ref).created.getTime();
    const names = patternMatchers('name', filters.get('name'));
    list = list.filter(
      (c) =>
        (all || c.status === 'running') &&
        labelsMatch(filters.get('label'), c.body.Labels ?? {}) &&
        anyMatches(names, (matches) => matches(`/${c.name}`)) &&
        anyMatches(filters.get('id'), (id) => c.id.startsWith(id)) &&
        anyMatches(filters.get('status'), (s) => s === c.status) &&
        anyMatches(filters.get('exited'), (e) => c.status === 'exited' && Number(e) === c.exitCode) &&
        anyMatches(filters.get('ancestor'), (a) => c.image === a || c.image === `${a}:latest` || c.image.replace(/:latest$/, '') === a) &&
        anyMatches(filters.get('network'), (n) => [...c.networks.keys()].some((id) => id.startsWith(n) || engine.networks.get(id)?.name === n)) &&
        anyMatches(filters.get('health'), (h) => (c.health?.status ?? 'none') === h) &&
        anyMatches(filters.get('before'), (b) => c.created.getTime() < created(b)) &&
        anyMatches(filters.get('since'), (s) => c.created.getTime() > created(s)),
    );
    const limit = call.int('limit') ?? -1;
    if (limit > 0) list = list.slice(0, limit);
    call.send(200, list.map((c) => listItem(c, engine.networks)));
  });
  r.add('POST', '/containers/prune', async (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const deleted: string[] = [];
    for (const c of [...engine.containers.values()]) {
      if (c.status === 'running' || !labelsMatch(filters.get('label'), c.body.Labels ?? {})) continue;
      await engine.remove(c.id, true);
      deleted.push(c.id);
    }
    call.send(200, { ContainersDeleted: deleted, SpaceReclaimed: 0 });
  });
  r.add('GET', '/containers/{id}/json', (call, [id]) => call.send(200, inspectContainer(engine.container(id), engine.networks)));
  r.add('POST', '/containers/{id}/start', async (call, [id]) => {
    const res = await engine.start(id);
    call.send(res === 'already' ? 304 : 204);
  });
  r.add('POST', '/containers/{id}/stop', async (call, [id]) => {
    const t = call.int('t') ?? call.int('timeout');
    const signal = call.query.get('signal');
    const res = await engine.stop(id, t, signal ? parseSignal(signal) : undefined);
    call.send(res === 'already' ? 304 : 204);
  });
  r.add('POST', '/containers/{id}/restart', async (call, [id]) => {
    await engine.restart(id, call.int('t'));
    call.send(204);
  });
  r.add('POST', '/containers/{id}/kill', async (call, [id]) => {
    await engine.kill(id, parseSignal(call.query.get('signal') || 'KILL'));
    call.send(204);
  });
  r.add('DELETE', '/containers/{id}', async (call, [id]) => {
    await engine.remove(id, call.flag('force'));
    call.send(204);
  });
  r.add('POST', '/containers/{id}/rename', (call, [id]) => {
    const name = call.query.get('name');
    if (!name) throw badRequest('name is required');
    engine.rename(id, name);
    call.send(204);
  });
  r.add('POST', '/containers/{id}/resize', (call, [id]) => {
    engine.container(id);
    call.int('h');
    call.int('w');
    call.send(200);
  });
  r.add('GET', '/containers/{id}/top', async (call, [id]) => {
    const c = engine.container(id);
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    const res = await engine.execCollect(c, ['ps', ...(call.query.get('ps_args') ? [call.query.get('ps_args') as string] : [])]);
    if (res.exitCode !== 0) throw new DockerError(500, `ps in container ${c.name} failed: ${res.stderr.trim()} (the image needs ps)`);
    const lines = res.stdout.trim().split('\n');
    const titles = lines[0].trim().split(/\s+/);
    const processes = lines.slice(1).map((l) => {
      const parts = l.trim().split(/\s+/);
      return [...parts.slice(0, titles.length - 1), parts.slice(titles.length - 1).join(' ')];
    });
    call.send(200, { Titles: titles, Processes: processes });
  });
  r.add('POST', '/containers/{id}/wait', async (call, [id]) => {
    const c = engine.container(id);
    const condition = call.query.get('condition') ?? 'not-running';
    if (!['not-running', 'next-exit', 'removed'].includes(condition)) throw badRequest(`invalid condition: "${condition}"`);
    const out = call.startChunked('application/json');
    const abort = new AbortController();
    call.req.socket.once('close', () => abort.abort());
    const result = await engine.wait(c, condition, abort.signal);
    out.end(`${JSON.stringify(result)}\n`);
  });
  r.add('GET', '/containers/{id}/logs', async (call, [id]) => {
    const c = engine.container(id);
    const stdout = call.flag('stdout');
    const stderr = call.flag('stderr');
    if (!stdout && !stderr) throw badRequest('you must choose at least one stream');
    if (call.query.get('tail') !== 'all') call.int('tail');
    if (call.query.get('since') && !Number.isFinite(Number(call.query.get('since')))) throw badRequest(`invalid value for since: "${call.query.get('since')}" (give a unix timestamp in seconds)`);
    const tty = Boolean(c.body.Tty);
    const out = call.startChunked(tty || compareVersions(call.version, '1.42') < 0 ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream');
    try {
      await streamLogs(engine, c, out, {
        stdout,
        stderr,
        follow: call.flag('follow'),
        tail: call.query.get('tail'),
        since: call.query.get('since'),
        timestamps: call.flag('timestamps'),
        closed: new Promise<void>((resolve) => call.req.socket.once('close', () => resolve())),
      });
    } catch (err) {
      // The status is sent: a cut chunked response is how the client learns the log is not whole.
      process.stderr.write(`berth serve: logs of ${c.name}: ${(err as Error).message}\n`);
      out.destroy();
      return;
    }
    out.end();
  });
  r.add('POST', '/containers/{id}/attach', async (call, [id]) => {
    const c = engine.container(id);
    const tty = Boolean(c.body.Tty);
    const stream = call.openStream(tty ? 'application/vnd.docker.raw-stream' : compareVersions(call.version, '1.42') >= 0 ? 'application/vnd.docker.multiplexed-stream' : 'application/vnd.docker.raw-stream');
    await attach(engine, c, stream, {
      stdin: call.flag('stdin') && Boolean(c.body.OpenStdin),
      stdout: call.flag('stdout'),
      stderr: call.flag('stderr'),
      logs: call.flag('logs'),
      live: call.flag('stream'),
    });
  });

  // ---- archives ----
  r.add('HEAD', '/containers/{id}/archive', async (call, [id]) => {
    const c = engine.container(id);
    const st = await engine.files.stat(c, requirePath(call));
    call.send(200, undefined, { 'X-Docker-Container-Path-Stat': statHeader(st) });
  });
  r.add('GET', '/containers/{id}/archive', async (call, [id]) => {
    const c = engine.container(id);
    let out: Writable | undefined;
    await engine.files.read(c, requirePath(call), (st) => (out = call.startChunked('application/x-tar', 200, { 'X-Docker-Container-Path-Stat': statHeader(st) })));
    out?.end();
  });
  r.add('PUT', '/containers/{id}/archive', async (call, [id]) => {
    engine.container(id);
    const path = requirePath(call);
    // Bounded before and after gzip inflation, and in time (a stalled upload is a 408).
    const { tar } = await sanitizeArchive(call.body(), DEFAULT_MAX_ARCHIVE_BYTES);
    await engine.putArchive(id, path, tar);
    // An empty body: testcontainers-node feeds the response to Readable.from.
    call.send(200);
  });

  // ---- exec ----
  r.add('POST', '/containers/{id}/exec', async (call, [id]) => {
    const c = engine.container(id);
    const body = checkBody<{ Cmd?: string[] | string | null; Env?: string[] | null; WorkingDir?: string; User?: string; Tty?: boolean; AttachStdin?: boolean; AttachStdout?: boolean; AttachStderr?: boolean }>('exec', await call.json(false));
    const cmd = Array.isArray(body.Cmd) ? body.Cmd : body.Cmd ? [body.Cmd] : [];
    if (cmd.length === 0) throw badRequest('No exec command specified');
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    const rec: ExecRecord = {
      id: newId(),
      containerId: c.id,
      cmd,
      env: body.Env ?? [],
      workingDir: body.WorkingDir ?? '',
      user: body.User ?? '',
      tty: Boolean(body.Tty),
      attachStdin: Boolean(body.AttachStdin),
      attachStdout: Boolean(body.AttachStdout) || !body.AttachStderr,
      attachStderr: Boolean(body.AttachStderr),
      running: false,
      exitCode: null,
    };
    execs.set(rec.id, rec);
    call.send(201, { Id: rec.id });
  });
  r.add('POST', '/exec/{id}/start', async (call, [id]) => {
    const rec = execs.get(id);
    if (!rec) throw notFound(`No such exec instance: ${id}`);
    const body = checkBody<{ Detach?: boolean; Tty?: boolean }>('execStart', (await call.json()) ?? {});
    const c = engine.container(rec.containerId);
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    if (rec.running || rec.exitCode !== null) throw conflict(`exec ${id} has already been started`);
    const argv = execArgv(rec);
    rec.running = true;
    if (body.Detach) {
      call.send(200);
      void engine
        .execStream(c, argv, { stdout: new PassThrough().resume(), stderr: new PassThrough().resume(), tty: rec.tty })
        .then((code) => (rec.exitCode = code), () => (rec.exitCode = 126))
        .finally(() => (rec.running = false));
      return;
    }
    const tty = rec.tty || Boolean(body.Tty);
    const stream = call.openStream(tty ? 'application/vnd.docker.raw-stream' : compareVersions(call.version, '1.42') >= 0 ? 'application/vnd.docker.multiplexed-stream' : 'application/vnd.docker.raw-stream');
    const stdout = rec.attachStdout ? framedWriter(stream.out, STDOUT, tty) : new PassThrough().resume();
    const stderr = rec.attachStderr ? framedWriter(stream.out, tty ? STDOUT : STDERR, tty) : new PassThrough().resume();
    try {
      rec.exitCode = await engine.execStream(c, argv, { stdin: rec.attachStdin ? stream.input : undefined, stdout, stderr, tty });
    } catch (err) {
      rec.exitCode = 126;
      stderr.write(Buffer.from(`berth: exec failed: ${(err as Error).message}\n`));
    } finally {
      rec.running = false;
      await new Promise<void>((resolve) => stdout.end(() => stderr.end(() => resolve())));
      stream.end();
    }
  });
  r.add('GET', '/exec/{id}/json', (call, [id]) => {
    const rec = execs.get(id);
    if (!rec) throw notFound(`No such exec instance: ${id}`);
    call.send(200, {
      ID: rec.id,
      ContainerID: rec.containerId,
      Running: rec.running,
      ExitCode: rec.exitCode,
      Pid: 0,
      OpenStdin: rec.attachStdin,
      OpenStdout: rec.attachStdout,
      OpenStderr: rec.attachStderr,
      CanRemove: false,
      DetachKeys: '',
      ProcessConfig: { entrypoint: rec.cmd[0], arguments: rec.cmd.slice(1), tty: rec.tty, user: rec.user, privileged: false },
    });
  });
  r.add('POST', '/exec/{id}/resize', (call, [id]) => {
    if (!execs.has(id)) throw notFound(`No such exec instance: ${id}`);
    call.int('h');
    call.int('w');
    call.send(200);
  });

  // ---- networks ----
  const networkJson = (id: string): Record<string, unknown> => {
    const n = engine.network(id);
    const containers: Record<string, unknown> = {};
    for (const c of engine.containers.values()) {
      if (c.networks.has(n.id)) containers[c.id] = { Name: c.name, EndpointID: c.id.slice(0, 24), MacAddress: '', IPv4Address: c.podIP ? `${c.podIP}/32` : '', IPv6Address: '' };
    }
    return {
      Name: n.name,
      Id: n.id,
      Created: n.created.toISOString(),
      Scope: 'local',
      Driver: n.driver,
      EnableIPv6: false,
      // Clients in a container (testcontainers) take the bridge gateway as the host of published ports.
      IPAM: { Driver: 'default', Options: null, Config: n.name === 'bridge' ? [{ Subnet: `${engine.publishAddress}/32`, Gateway: engine.publishAddress }] : [] },
      Internal: n.internal,
      Attachable: true,
      Ingress: false,
      ConfigFrom: { Network: '' },
      ConfigOnly: false,
      Containers: containers,
      Options: {},
      Labels: n.labels,
    };
  };
  r.add('GET', '/networks', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const list = [...engine.networks.values()].filter(
      (n) =>
        anyMatches(filters.get('name'), (x) => n.name === x || n.name.includes(x)) &&
        anyMatches(filters.get('id'), (x) => n.id.startsWith(x)) &&
        anyMatches(filters.get('driver'), (x) => n.driver === x) &&
        labelsMatch(filters.get('label'), n.labels),
    );
    call.send(200, list.map((n) => networkJson(n.id)));
  });
  r.add('GET', '/networks/{id}', (call, [id]) => call.send(200, networkJson(id)));
  r.add('POST', '/networks/create', async (call) => {
    const body = checkBody<{ Name?: string; Driver?: string; Labels?: Record<string, string>; Internal?: boolean }>('networkCreate', await call.json(false));
    const n = engine.createNetwork(body);
    call.send(201, { Id: n.id, Warning: '' });
  });
  r.add('POST', '/networks/{id}/connect', async (call, [id]) => {
    const body = checkBody<{ Container?: string; EndpointConfig?: { Aliases?: string[] | null } | null }>('networkConnect', await call.json(false));
    if (!body.Container) throw badRequest('Container is required');
    await engine.connect(id, body.Container, body.EndpointConfig?.Aliases ?? []);
    call.send(200);
  });
  r.add('POST', '/networks/{id}/disconnect', async (call, [id]) => {
    const body = checkBody<{ Container?: string }>('networkDisconnect', await call.json(false));
    if (!body.Container) throw badRequest('Container is required');
    await engine.disconnect(id, body.Container);
    call.send(200);
  });
  r.add('DELETE', '/networks/{id}', (call, [id]) => {
    engine.removeNetwork(id);
    call.send(204);
  });
  r.add('POST', '/networks/prune', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const deleted: string[] = [];
    for (const n of [...engine.networks.values()]) {
      if (n.builtin || !labelsMatch(filters.get('label'), n.labels)) continue;
      try {
        engine.removeNetwork(n.id);
        deleted.push(n.name);
      } catch {
        /* in use: kept, as docker does */
      }
    }
    call.send(200, { NetworksDeleted: deleted });
  });

  // ---- volumes ----
  const volumeJson = (name: string): Record<string, unknown> => {
    const v = engine.volumes.get(name);
    if (!v) throw notFound(`get ${name}: no such volume`);
    return { Name: v.name, Driver: 'local', Mountpoint: `pvc://${v.claim}`, CreatedAt: v.created.toISOString(), Labels: v.labels, Scope: 'local', Options: {} };
  };
  r.add('GET', '/volumes', (call) => {
    const filters = parseFilters(call.query.get('filters'));
    const list = [...engine.volumes.values()].filter((v) => labelsMatch(filters.get('label'), v.labels) && anyMatches(filters.get('name'), (n) => v.name.includes(n)));
    call.send(200, { Volumes: list.map((v) => volumeJson(v.name)), Warnings: [] });
  });
  r.add('POST', '/volumes/create', async (call) => {
    const body = checkBody<{ Name?: string; Labels?: Record<string, string> | null }>('volumeCreate', (await call.json()) ?? {});
    const name = body.Name || newId();
    if (engine.volumes.has(name)) return call.send(201, volumeJson(name));
    await engine.ensureVolume(name, body.Labels ?? {});
    call.send(201, volumeJson(name));
  });
  r.add('GET', '/volumes/{name}', (call, [name]) => call.send(200, volumeJson(name)));
  r.add('DELETE', '/volumes/{name}', async (call, [name]) => {
    await engine.removeVolume(name, call.flag('force'));
    call.send(204);
  });
  r.add('POST', '/volumes/prune', async (call) => {
    const deleted: string[] = [];
    for (const v of [...engine.volumes.values()]) {
      try {
        await engine.removeVolume(v.name, false);
        deleted.push(v.name);
      } catch {
        /* in use */
      }
    }
    call.send(200, { VolumesDeleted: deleted, SpaceReclaimed: 0 });
  });

  // ---- not served ----
  for (const [method, pattern] of [
    ['POST', '/build'],
    ['POST', '/commit'],
    ['POST', '/images/load'],
    ['GET', '/images/get'],
    ['POST', /^\/images\/(.+)\/push$/],
    ['GET', '/containers/{id}/stats'],
    ['GET', '/containers/{id}/export'],
    ['GET', '/containers/{id}/changes'],
    ['POST', '/containers/{id}/update'],
    ['POST', '/containers/{id}/pause'],
    ['POST', '/containers/{id}/unpause'],
  ] as Array<[string, string | RegExp]>) {
    r.add(method, pattern, (call) => call.send(501, { message: `${call.method} ${call.path} is not implemented by berth serve: containers are Kubernetes pods` }));
  }
  return r;
}

/** Turns known error kinds into Docker statuses. */
export function toDockerError(err: unknown): DockerError {
  if (err instanceof DockerError) return err;
  if (err instanceof FilterError) return badRequest(err.message);
  if (err instanceof ArchiveError) return new DockerError(err.status, err.message);
  if (err instanceof SandboxPlanError || err instanceof PodTemplateError) return badRequest(err.message);
  if (err instanceof KubeError) return new DockerError(500, err.message);
  return new DockerError(500, (err as Error)?.message ?? String(err));
}

function requirePath(call: Call): string {
  const path = call.query.get('path');
  if (!path) throw badRequest('path is required');
  if (!path.startsWith('/')) throw badRequest(`path ${path} must be absolute`);
  return path;
}

function statHeader(st: { name: string; size: number; mode: number; mtime: string; linkTarget: string }): string {
  return Buffer.from(JSON.stringify({ name: st.name, size: st.size, mode: goFileMode(st.mode), mtime: st.mtime, linkTarget: st.linkTarget })).toString('base64');
}

function execArgv(rec: ExecRecord): string[] {
  let argv = rec.cmd;
  if (rec.env.length) argv = ['env', ...rec.env, ...argv];
  if (rec.workingDir) argv = ['/bin/sh', '-c', 'cd "$0" && exec "$@"', rec.workingDir, ...argv];
  return argv;
}

function goArch(): string {
  const a = os.arch();
  return a === 'x64' ? 'amd64' : a;
}

interface LogOptions {
  stdout: boolean;
  stderr: boolean;
  follow: boolean;
  tail: string | null;
  since: string | null;
  timestamps: boolean;
  closed: Promise<void>;
  sinceTime?: string;
}

/**
 * Pod log(s) → Docker frames. stdout and stderr apart through KEP-3288's `stream` parameter. Each log is
 * copied exactly (log-copy.ts: dropped streams resumed, verified); when it cannot be, this rejects
 * with LogIncomplete and the caller cuts the response instead of ending it as if it were whole.
 */
async function streamLogs(engine: Engine, c: ContainerRecord, out: Writable, o: LogOptions): Promise<void> {
  if (engine.isReaper(c)) return reaperLogs(engine, c, out, o);
  // A created container has no pod yet: when following, its output starts with the start.
  if (o.follow) {
    let gone = false;
    void o.closed.then(() => (gone = true));
    while (c.status === 'created' && engine.containers.get(c.id) === c && !gone) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
  }
  if (!c.podName) return;
  const podName = c.podName;
  const tty = Boolean(c.body.Tty);
  const tailLines = o.tail === null || o.tail === 'all' || Number(o.tail) < 0 ? undefined : Number(o.tail);
  const since = o.since && Number(o.since) > 0 ? new Date(Number(o.since) * 1000).toISOString().replace(/\.\d+Z$/, 'Z') : o.sinceTime;
  const wanted: Array<['Stdout' | 'Stderr' | 'All', number]> = tty ? [['All', STDOUT]] : [];
  if (!tty) {
    if (o.stdout) wanted.push(['Stdout', STDOUT]);
    if (o.stderr) wanted.push(['Stderr', STDERR]);
  }
  const follow = o.follow && c.status === 'running';
  const everRan = Boolean(c.startedAt) || c.status === 'running';
  const abort = new AbortController();
  void o.closed.then(() => abort.abort());
  const copy = async (q: LogQuery, writer: Writable, what: string): Promise<void> => {
    const source = { open: () => engine.openLog(podName, q), ended: () => engine.podEnded(podName) };
    await copyLog(source, writer, { follow, resumable: tailLines === undefined, signal: abort.signal, what: `${what} of container ${c.name}` });
  };
  c.readers++;
  try {
    await Promise.all(
      wanted.map(async ([stream, id]) => {
        const writer = framedWriter(out, id, tty);
        const q: LogQuery = { follow, stream, tailLines, timestamps: o.timestamps, sinceTime: since };
        const what = stream === 'All' ? 'the log' : `the ${stream.toLowerCase()} log`;
        try {
          await copy(q, writer, what);
        } catch (err) {
          if (err instanceof LogIncomplete) throw err;
          // A container that never ran has no log to read (its start failure is reported by start).
          if (!everRan) return;
          // Clusters without the split-stream log gate refuse `stream` (400/422): everything arrives as stdout.
          const refused = err instanceof KubeError && (err.code === 400 || err.code === 422);
          if (stream === 'All' || !refused) throw err;
          if (id === STDERR) return;
          await copy({ ...q, stream: undefined }, writer, 'the log');
        }
        // Done when the last frame is written, not when the cluster's stream ends: a slow client still
        // holds frames in the writer then, and the response must not end before them.
        await new Promise<void>((resolve) => {
          writer.end(() => resolve());
          abort.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }),
    );
  } finally {
    abort.abort();
    engine.releaseReader(c);
  }
}

/** attach: stdin into the pod's main container, output from its log (which also holds what came before). */
async function attach(engine: Engine, c: ContainerRecord, stream: OpenedStream, o: { stdin: boolean; stdout: boolean; stderr: boolean; logs: boolean; live: boolean }): Promise<void> {
  c.readers++;
  try {
    const closed = stream.closed;
    let gone = false;
    void closed.then(() => (gone = true));
    // Opened before the container runs (docker run, docker start -a): the whole output of the run that
    // follows is this attach's, however long the start takes.
    const beforeStart = c.status !== 'running';
    const generation = c.generation;
    const waiting = (): boolean => c.status === 'created' || (o.live && beforeStart && c.status === 'exited' && c.generation === generation);
    while (waiting() && engine.containers.get(c.id) === c) {
      await Promise.race([engine.nextChange(c, 60_000), closed]);
      if (gone) return;
    }
    if (!c.podName) return stream.end();
    const attachedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    if (o.stdin && c.status === 'running') {
      void engine
        .attachStdin(c.podName, stream.input, Boolean(c.body.Tty))
        .then((s) => s.done)
        .catch(() => undefined);
    }
    if (o.live || o.logs) {
      try {
        await streamLogs(engine, c, stream.out, {
          stdout: o.stdout,
          stderr: o.stderr,
          follow: o.live,
          tail: null,
          since: null,
          timestamps: false,
          closed,
          sinceTime: beforeStart || o.logs ? undefined : attachedAt,
        });
      } catch (err) {
        // Cut, not ended: the client must not take a short output for the whole one; `wait` reports why.
        engine.outputIncomplete(c, (err as Error).message);
        stream.out.destroy();
        return;
      }
    }
    stream.end();
  } finally {
    engine.releaseReader(c);
  }
}

/** berth's own reaper has no pod: its log is the line testcontainers waits for. */
async function reaperLogs(engine: Engine, c: ContainerRecord, out: Writable, o: LogOptions): Promise<void> {
  if (c.status === 'created' && o.follow) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
  if (o.stdout && c.status !== 'created') out.write(frame(STDOUT, Buffer.from('Started! (berth serves the Ryuk protocol itself)\n')));
  if (!o.follow) return;
  let gone = false;
  void o.closed.then(() => (gone = true));
  while (c.status === 'running' && !gone) await Promise.race([engine.nextChange(c, 60_000), o.closed]);
}
