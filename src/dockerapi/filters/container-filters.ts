/**
 * `docker ps --filter …` as dockerd reads it (moby daemon/list.go): every key it accepts does what it does
 * there, values are checked before anything is listed, and a key it does not know is refused. None is
 * accepted and ignored: `docker rm -f $(docker ps -aq --filter volume=x)` must not see every container.
 */
import { anyMatches, boolFilter, checkKeys, FilterError, invalidFilter, labelsMatch, patternMatchers, type Filters } from './filters.js';
import type { ContainerRecord } from '../model.js';
import { portSummaries } from '../containers/container-view.js';
import { mountPointsOf } from '../volumes/volumes.js';
import { tryNormalizeImage } from '../images/image-ref.js';

const KEYS = [
  'ancestor',
  'before',
  'exited',
  'expose',
  'health',
  'id',
  'is-task',
  'isolation',
  'label',
  'name',
  'network',
  'publish',
  'since',
  'status',
  'volume',
];
const STATES = ['created', 'running', 'paused', 'restarting', 'removing', 'exited', 'dead'];
const HEALTHS = ['none', 'starting', 'healthy', 'unhealthy'];

export interface ListLookups {
  /** The container a `before` or `since` names (a 404 when there is none, as dockerd answers). */
  container(ref: string): ContainerRecord;
  /** A network's name by id. */
  networkName(id: string): string | undefined;
}

export function containerListFilter(filters: Filters, lookups: ListLookups): (c: ContainerRecord) => boolean {
  checkKeys(filters, KEYS);
  checkValues(filters);
  const names = patternMatchers('name', filters.get('name'));
  const ids = patternMatchers('id', filters.get('id'));
  const isolations = patternMatchers('isolation', filters.get('isolation'));
  // berth runs no swarm tasks: is-task=true lists none, is-task=false all
  const isTask = boolFilter(filters, 'is-task');
  const before = filters.get('before')?.map((ref) => lookups.container(ref).created.getTime());
  const since = filters.get('since')?.map((ref) => lookups.container(ref).created.getTime());
  const ports = portsFilter(filters);
  return (c) =>
    isTask !== true &&
    labelsMatch(filters.get('label'), c.body.Labels ?? {}) &&
    anyMatches(names, (matches) => matches(`/${c.name}`) || matches(c.name)) &&
    anyMatches(ids, (matches) => matches(c.id)) &&
    // Isolation is ignored at create (with a warning): every container runs with the default
    anyMatches(isolations, (matches) => matches('default')) &&
    anyMatches(filters.get('status'), (s) => s === c.status) &&
    anyMatches(filters.get('exited'), (e) => c.status === 'exited' && Number(e) === c.exitCode) &&
    anyMatches(filters.get('health'), (h) => (c.health?.status ?? 'none') === h) &&
    anyMatches(filters.get('ancestor'), (a) => c.image === a || tryNormalizeImage(c.image) === tryNormalizeImage(a)) &&
    anyMatches(filters.get('network'), (n) => [...c.networks.keys()].some((id) => id.startsWith(n) || lookups.networkName(id) === n)) &&
    anyMatches(filters.get('volume'), (v) => mountPointsOf(c).some((m) => m.name === v || m.destination === v)) &&
    anyMatches(before, (t) => c.created.getTime() < t) &&
    anyMatches(since, (t) => c.created.getTime() > t) &&
    ports(c);
}

/** The values dockerd checks before it lists: a status or health it does not know, an exit code that is no number. */
function checkValues(filters: Filters): void {
  for (const s of filters.get('status') ?? []) {
    if (!STATES.includes(s)) throw invalidFilter('status', s, `invalid value for state (${s}): must be one of ${STATES.join(', ')}`);
  }
  for (const h of filters.get('health') ?? []) {
    if (!HEALTHS.includes(h)) throw invalidFilter('health', h, `invalid value for health (${h}): must be one of ${HEALTHS.join(', ')}`);
  }
  for (const e of filters.get('exited') ?? []) {
    if (!/^[-+]?\d+$/.test(e)) throw invalidFilter('exited', e, `"${e}" is not an exit code (a whole number)`);
  }
}

interface PortRange {
  start: number;
  end: number;
  proto: string;
}

/**
 * `publish` and `expose` as dockerd matches them: against the ports `docker ps` shows (portSummaries: a
 * running container's), `publish` a host port, `expose` a container port; `80`, `80/tcp`, `8000-8080/udp`
 * (no protocol is tcp). A container passes when one of its ports meets either.
 */
function portsFilter(filters: Filters): (c: ContainerRecord) => boolean {
  const publish = (filters.get('publish') ?? []).map((v) => portRange('publish', v));
  const expose = (filters.get('expose') ?? []).map((v) => portRange('expose', v));
  if (!publish.length && !expose.length) return () => true;
  const within = (ranges: PortRange[], port: number | undefined, proto: string): boolean =>
    port !== undefined && ranges.some((r) => r.proto === proto && port >= r.start && port <= r.end);
  return (c) => portSummaries(c).some((p) => within(publish, p.PublicPort, p.Type) || within(expose, p.PrivatePort, p.Type));
}

/** A port filter value as dockerd parses it (go-connections' SplitProtoPort and ParsePortRange), with its words when it cannot. */
function portRange(key: string, value: string): PortRange {
  if (value.includes(':')) throw new FilterError(`filter for '${key}' should not contain ':': ${value}`);
  const [ports, proto] = value.split('/');
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(ports);
  const [start, end] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
  if (!m || start > 65535 || end > 65535 || end < start) {
    throw new FilterError(`error while looking up for ${key} ${value}: "${ports}" is not a port or a range of ports (80, 80/tcp, 8000-8080/udp)`);
  }
  return { start, end, proto: proto || 'tcp' };
}
