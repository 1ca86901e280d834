/** System: ping, version, info, events. */
import os from 'node:os';
import { badRequest, type Call, type Router } from '../http/http.js';
import { API_VERSION, ENGINE_VERSION, since } from '../http/api-version.js';
import { parseFilters } from '../filters/filters.js';
import { eventFilter } from '../filters/event-filters.js';
import type { Engine } from '../engine.js';
import type { DockerEvent } from '../event-bus.js';
import { parseUnixTimestamp } from '../logs/log-time.js';

export interface SystemInfo {
  /** berth's version, reported as the engine's (given by the CLI: this package does not read it). */
  version: string;
  /** The oldest API version this server admits (server.ts), announced as MinAPIVersion. */
  minApiVersion: string;
}

export function goArch(): string {
  const a = os.arch();
  return a === 'x64' ? 'amd64' : a;
}

export function systemRoutes(r: Router, engine: Engine, info: SystemInfo): void {
  const ping = (call: Call): void =>
    call.send(200, 'OK', { 'Cache-Control': 'no-cache, no-store, must-revalidate', Pragma: 'no-cache', 'Content-Type': 'text/plain; charset=utf-8' });
  r.op('SystemPing', 'GET', '/_ping', ping);
  r.op('SystemPingHead', 'HEAD', '/_ping', ping);
  r.op('SystemVersion', 'GET', '/version', (call) =>
    call.send(200, {
      Platform: { Name: `berth ${info.version}` },
      Components: [
        { Name: 'Engine', Version: ENGINE_VERSION, Details: { ApiVersion: API_VERSION, MinAPIVersion: info.minApiVersion, Os: 'linux', Arch: goArch() } },
        { Name: 'berth', Version: info.version, Details: { Containers: 'Kubernetes pods' } },
      ],
      Version: ENGINE_VERSION,
      ApiVersion: API_VERSION,
      MinAPIVersion: info.minApiVersion,
      GitCommit: 'berth',
      GoVersion: `node${process.versions.node}`,
      Os: 'linux',
      Arch: goArch(),
      KernelVersion: os.release(),
      BuildTime: '',
    }),
  );
  r.op('SystemInfo', 'GET', '/info', (call) => call.send(200, systemInfo(engine, info)));
  r.op('SystemEvents', 'GET', '/events', (call) => streamEvents(engine, call));
}

/**
 * A `since`/`until` query parameter, in nanoseconds: unix seconds with an optional fraction (the docker CLI turns
 * durations and dates into `seconds.nanoseconds`), read as the logs route and dockerd read it, refused in its words.
 */
function eventTime(call: Call, name: string): bigint | undefined {
  const raw = call.query.get(name);
  if (!raw) return undefined;
  try {
    return parseUnixTimestamp(raw);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

function systemInfo(engine: Engine, info: SystemInfo): Record<string, unknown> {
  const all = [...engine.containers.values()];
  return {
    ID: engine.owner,
    Name: `berth-${engine.owner}`,
    ServerVersion: ENGINE_VERSION,
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
    // the engine version is the dockerd release whose API berth serves (/version); berth's own is a daemon label
    Labels: [`dev.berth.version=${info.version}`],
    Containers: all.length,
    ContainersRunning: all.filter((c) => c.status === 'running').length,
    ContainersPaused: 0,
    ContainersStopped: all.filter((c) => c.status !== 'running').length,
    Images: engine.images.size,
    SecurityOptions: ['name=seccomp,profile=default'],
    Swarm: { LocalNodeState: 'inactive' },
    Plugins: { Volume: ['local'], Network: ['bridge', 'host', 'null'] },
  };
}

/** An event as API 1.52 sends it: without `status`, `id` and `from`, which Type, Action and Actor replaced in 1.22. */
function withoutLegacyFields(e: DockerEvent): object {
  const { status: _status, id: _id, from: _from, ...current } = e;
  return current;
}

/**
 * Events from `since`, or up to `until` (the ones berth kept, replayed when either is given, as dockerd replays its
 * buffer), and then as they happen, filtered, until the client leaves or `until` passes.
 */
async function streamEvents(engine: Engine, call: Call): Promise<void> {
  const wanted = eventFilter(parseFilters(call.query.get('filters')));
  const sinceNs = eventTime(call, 'since');
  const until = eventTime(call, 'until');
  if (until !== undefined && until < (sinceNs ?? 0n))
    throw badRequest(`\`since\` time (${call.query.get('since')}) cannot be after \`until\` time (${call.query.get('until')})`);
  const out = call.startChunked('application/json');
  const shape = since(call.version, '1.52') ? withoutLegacyFields : (e: DockerEvent): object => e;
  const write = (e: DockerEvent): void => void (wanted(e) && out.write(`${JSON.stringify(shape(e))}\n`));
  const unsubscribe = engine.events.subscribe(write);
  if (sinceNs !== undefined || until !== undefined) for (const e of engine.events.history(sinceNs ?? 0n, until)) write(e);
  const closed = call.clientGone();
  const untilMs = until === undefined ? undefined : Number(until / 1_000_000n);
  const timer =
    untilMs !== undefined ? new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, untilMs - Date.now())).unref()) : new Promise<void>(() => undefined);
  await Promise.race([closed, timer]);
  unsubscribe();
  out.end();
}
