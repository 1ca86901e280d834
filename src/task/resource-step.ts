/**
 * The `get` and `put` steps of a plan: a resource type's /opt/resource/check, in and out, each run in a pod
 * of its own exactly as a task step runs (run-task.ts: same locked-down pod, labels, deadline, cleanup),
 * with the resource-type contract: the JSON request on stdin, the JSON response on stdout, the log on
 * stderr. The pod's working directory is /tmp/build, laid out as Concourse lays out resource containers:
 * `in` fetches into /tmp/build/get, `out` finds the artifacts of the build in /tmp/build/put/<name>.
 * The request travels in the inputs tar (never in the pod spec: a source holds credentials), the image's
 * /bin/sh feeds it to the script and writes the script's stdout into a file, read back as an output; the
 * exit code is the container's terminated state, so a dropped stream changes nothing.
 */
import { pack } from 'tar-stream';
import { stringify } from 'yaml';
import { tarEntries } from './inputs.js';
import type { Mapping } from './layout.js';
import type { Artifact } from './artifacts.js';
import type { PlanRunOptions } from './plan-run.js';
import { detectInputs, type GetStep, type JsonObject, type PutStep, type Resource, type Version } from './resource-config.js';
import { EXIT_FAILED } from './exit-codes.js';
import { ERRORED, failed, SUCCEEDED, type StepOutcome } from './outcome.js';
import { runTaskStep, type StepArtifact } from './run-task.js';

const WORK = '/tmp/build';
/** request.json in, response.json out, below the working directory. */
const IO = '.berth/io';
const IO_NAME = '.berth-io';
const FETCHED = '.berth-fetched';

export type ResourceStepContext = Pick<PlanRunOptions, 'connect' | 'planFile' | 'target' | 'env' | 'cwd' | 'stdout' | 'stderr' | 'signal' | 'ledger'> & {
  artifacts: Map<string, Artifact>;
  say: (line: string) => void;
};

export async function runResourceStep(s: GetStep | PutStep, c: ResourceStepContext): Promise<StepOutcome> {
  if (s.kind === 'get') return get(s.name, s.resource, s.version, s.params, c);
  return put(s, c);
}

/** check (unless the version is pinned), then in; the fetched folder becomes the artifact `name`. */
async function get(name: string, resource: Resource, pinned: 'latest' | Version, params: JsonObject, c: ResourceStepContext): Promise<StepOutcome> {
  c.say(`get ${name}`);
  const label = `get ${name}`;
  let version: Version;
  if (pinned === 'latest') {
    const checked = await runScript(c, label, resource, 'check', { source: resource.source, version: null });
    if (!('response' in checked)) return checked.outcome;
    const versions = checked.response;
    if (!Array.isArray(versions) || !versions.every(isVersion)) return invalid(c, label, 'check', 'a list of versions ([{"key": "value"}, ...])', checked.raw);
    if (!versions.length) {
      c.say(`berth task: ${label}: /opt/resource/check found no version of resource ${resource.name} (it printed []): nothing to fetch`);
      return failed(EXIT_FAILED);
    }
    version = versions[versions.length - 1];
  } else version = pinned;
  const fetched = await runScript(c, label, resource, 'in', { source: resource.source, version, params }, { fetch: true });
  if (!('response' in fetched)) return fetched.outcome;
  if (!isResponse(fetched.response)) return invalid(c, label, 'in', '{"version": {...}, "metadata": [...]}', fetched.raw);
  show(c, fetched.response);
  c.artifacts.set(name, { tar: fetched.fetched as Buffer });
  return SUCCEEDED;
}

/** out with the artifacts its inputs name below /tmp/build/put, then (unless no_get) the get of the version it made. */
async function put(s: PutStep, c: ResourceStepContext): Promise<StepOutcome> {
  c.say(`put ${s.name}`);
  const label = `put ${s.name}`;
  const all = [...c.artifacts.keys()];
  const names = s.inputs === 'all' ? all : s.inputs === 'detect' ? detectInputs(s.params, all) : s.inputs;
  const missing = names.filter((n) => !c.artifacts.has(n));
  if (missing.length) {
    c.say(
      `berth task: ${label}${s.where}: inputs: no artifact ${missing.map((n) => `\`${n}\``).join(', ')} in the plan so far (its artifacts: ${all.map((n) => `\`${n}\``).join(', ') || 'none'})`,
    );
    return ERRORED;
  }
  const inputs = names.map((n) => asInput(n, c.artifacts.get(n) as Artifact));
  const out = await runScript(c, label, s.resource, 'out', { source: s.resource.source, params: s.params }, { inputs });
  if (!('response' in out)) return out.outcome;
  if (!isResponse(out.response)) return invalid(c, label, 'out', '{"version": {...}, "metadata": [...]}', out.raw);
  show(c, out.response);
  if (s.noGet) return SUCCEEDED;
  return get(s.name, s.resource, out.response.version, s.getParams, c);
}

type ScriptResult = { outcome: StepOutcome } | { response: unknown; raw: string; fetched?: Buffer };

/**
 * One resource script in its pod. Without a response: berth or the cluster failed, the run was
 * interrupted or the script failed (each said), and how the step ended.
 */
async function runScript(
  c: ResourceStepContext,
  label: string,
  resource: Resource,
  script: Script,
  request: object,
  opts: { fetch?: boolean; inputs?: Mapping[] } = {},
): Promise<ScriptResult> {
  const { config, shown } = scriptTask(
    script,
    (opts.inputs ?? []).map((m) => m.name),
    Boolean(opts.fetch),
  );
  const result = await runTaskStep({
    connect: c.connect,
    configFile: `${c.planFile} (${label}: ${shown})`,
    configText: stringify(config),
    inputs: [{ name: IO_NAME, dir: '(the request)', tar: await requestTar(request) }, ...(opts.inputs ?? [])],
    outputs: [],
    capture: [IO_NAME, ...(opts.fetch ? [FETCHED] : [])],
    paramsFromEnv: false,
    inPlan: true,
    includeIgnored: false,
    privileged: false,
    image: resource.type.image,
    // The plan's target, as for its tasks; the step's identity on the pod: `get repo: in`.
    target: c.target,
    step: `${label}: ${script}`,
    args: [],
    env: c.env,
    cwd: c.cwd,
    stdout: c.stdout,
    stderr: c.stderr,
    signal: c.signal,
    ledger: c.ledger,
    workDir: WORK,
    quiet: true,
  });
  const io = inMemory(result.artifacts.get(IO_NAME));
  // No response folder: the script never ended with an exit code (berth, the cluster or an interrupt; run-task said why).
  if (!io) return { outcome: result.outcome.kind === 'succeeded' ? ERRORED : result.outcome };
  if (result.outcome.kind === 'failed') {
    const code = result.outcome.code;
    const hint =
      code === 127 || code === 126 ? `: the image ${resource.type.image} has no executable /opt/resource/${script} (is it a Concourse resource type?)` : '';
    c.say(`berth task: ${label}: resource script '${shown}' failed: exit status ${code}${hint}`);
    return { outcome: result.outcome };
  }
  if (result.outcome.kind !== 'succeeded') return { outcome: result.outcome };
  const raw = (await tarEntries(io)).find((e) => e.header.name.replace(/^\.\//, '') === 'response.json')?.data.toString('utf8') ?? '';
  let response: unknown;
  try {
    response = JSON.parse(raw);
  } catch {
    const what = raw.trim() ? `invalid JSON on stdout: ${JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}...` : raw)}` : 'nothing on stdout';
    c.say(`berth task: ${label}: resource script '${shown}' printed ${what} (a resource script prints its JSON response on stdout, its log on stderr)`);
    return { outcome: failed(EXIT_FAILED) };
  }
  return { response, raw, ...(opts.fetch ? { fetched: inMemory(result.artifacts.get(FETCHED)) } : {}) };
}

/** A resource script's outputs are read into memory (its pod is not kept to serve them). */
function inMemory(a: StepArtifact | undefined): Buffer | undefined {
  return a && 'tar' in a ? a.tar : undefined;
}

type Script = 'check' | 'in' | 'out';

/**
 * A resource script as the task config of its pod (working directory /tmp/build): the request file on its
 * stdin, its stdout into the response file, the artifacts of a put at put/NAME, the fetched folder `get`.
 */
export function scriptTask(script: Script, artifacts: string[], fetch: boolean): { config: object; shown: string } {
  const dir = { check: 'check', in: 'get', out: 'put' }[script];
  const args = script === 'check' ? [] : [`${WORK}/${dir}`];
  const config = {
    platform: 'linux',
    inputs: [{ name: IO_NAME, path: IO }, ...artifacts.map((name) => ({ name, path: `put/${name}` }))],
    outputs: [{ name: IO_NAME, path: IO }, ...(fetch ? [{ name: FETCHED, path: 'get' }] : [])],
    run: { path: '/bin/sh', args: ['-c', `exec /opt/resource/${script} "$@" <${WORK}/${IO}/request.json >${WORK}/${IO}/response.json`, script, ...args], dir },
  };
  return { config, shown: [`/opt/resource/${script}`, ...args].join(' ') };
}

/** The version and metadata of an in or out response, as Concourse shows them beside the step. */
function show(c: ResourceStepContext, r: { version: Version; metadata?: Array<{ name: string; value: string }> }): void {
  c.say(
    `version: ${Object.entries(r.version)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  for (const m of r.metadata ?? []) c.say(`  ${m.name}: ${m.value}`);
}

function invalid(c: ResourceStepContext, label: string, script: string, expected: string, raw: string): StepOutcome {
  c.say(
    `berth task: ${label}: resource script '/opt/resource/${script}' printed JSON that is not ${expected}: ${raw.length > 200 ? `${raw.slice(0, 200)}...` : raw.trim()}`,
  );
  return failed(EXIT_FAILED);
}

function isVersion(v: unknown): v is Version {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function isResponse(r: unknown): r is { version: Version; metadata?: Array<{ name: string; value: string }> } {
  if (typeof r !== 'object' || r === null || !isVersion((r as { version?: unknown }).version)) return false;
  const metadata = (r as { metadata?: unknown }).metadata;
  return (
    metadata === undefined ||
    metadata === null ||
    (Array.isArray(metadata) && metadata.every((m) => typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string'))
  );
}

/** An artifact as an input of the out container (at put/<name>). */
function asInput(name: string, a: Artifact): Mapping {
  if ('dir' in a) return { name, dir: a.dir };
  return { name, dir: `(artifact ${name})`, ...('tar' in a ? { tar: a.tar } : { from: a.pod }) };
}

/** A tar holding request.json (the request's JSON, as the script reads it on stdin). */
export function requestTar(request: object): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = pack();
    const chunks: Buffer[] = [];
    p.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
    p.on('end', () => resolve(Buffer.concat(chunks)));
    p.on('error', reject);
    p.entry({ name: 'request.json', type: 'file', mode: 0o644 }, Buffer.from(JSON.stringify(request), 'utf8'));
    p.finalize();
  });
}
