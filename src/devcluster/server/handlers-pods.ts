// Pod subresources served by the node: log (a chunked text stream) and the upgrades exec, attach and
// portforward, whose protocols the streams/ modules speak.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { badRequest, invalidOptions } from '../api/errors.js';
import { handlePortForwardUpgrade } from '../streams/portforward.js';
import { handleRemoteCommandUpgrade } from '../streams/remotecommand.js';
import type { KubeObject, LogOptions } from '../types.js';
import { queryBool, queryInt, type ResourceRequest, type ServerContext } from './handlers-context.js';

const containerNames = (list: any[] | undefined): string[] => (list ?? []).map((c) => c?.name).filter((n): n is string => typeof n === 'string');

/** the container a request means, with the real server's 400s for a missing or unknown name */
export function chooseContainer(pod: KubeObject, requested: string | null): string {
  const podName = pod.metadata.name!;
  const regular = containerNames(pod.spec?.containers);
  const init = containerNames(pod.spec?.initContainers);
  const ephemeral = containerNames(pod.spec?.ephemeralContainers);
  if (requested) {
    if ([...regular, ...init, ...ephemeral].includes(requested)) return requested;
    throw badRequest(`container ${requested} is not valid for pod ${podName}`);
  }
  if (regular.length === 1) return regular[0]!;
  let message = `a container name must be specified for pod ${podName}, choose one of: [${regular.join(' ')}]`;
  if (init.length) message += ` or one of the init containers: [${init.join(' ')}]`;
  if (ephemeral.length) message += ` or one of the ephemeral containers: [${ephemeral.join(' ')}]`;
  throw badRequest(message);
}

function logOptions(q: URLSearchParams, container: string): LogOptions {
  const opts: LogOptions = { container };
  if (queryBool(q, 'follow')) opts.follow = true;
  if (queryBool(q, 'previous')) opts.previous = true;
  if (queryBool(q, 'timestamps')) opts.timestamps = true;
  const since = queryInt(q, 'sinceSeconds');
  if (since !== undefined) opts.sinceSeconds = since;
  const sinceTime = q.get('sinceTime');
  if (sinceTime) opts.sinceTime = sinceTime;
  const tail = queryInt(q, 'tailLines');
  if (tail !== undefined) opts.tailLines = tail;
  const limit = queryInt(q, 'limitBytes');
  if (limit !== undefined) opts.limitBytes = limit;
  const stream = q.get('stream');
  if (stream) opts.stream = stream;
  return opts;
}

/**
 * PodLogOptions validated as a 1.32 server does (with KEP-3288's PodLogsQuerySplitStreams): before the pod is
 * looked up, so a bad query is 422 even for a pod that does not exist; every problem is listed.
 */
function validateLogOptions(q: URLSearchParams, podName: string): void {
  const causes: Array<{ reason: string; message: string; field: string }> = [];
  const invalid = (field: string, value: string, detail: string) =>
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${detail}`, field });
  const forbidden = (detail: string) => causes.push({ reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field: '' });
  const tail = queryInt(q, 'tailLines');
  if (tail !== undefined && tail < 0) invalid('tailLines', String(tail), 'must be greater than or equal to 0');
  const limit = queryInt(q, 'limitBytes');
  if (limit !== undefined && limit < 1) invalid('limitBytes', String(limit), 'must be greater than 0');
  const since = queryInt(q, 'sinceSeconds');
  if (since !== undefined && q.get('sinceTime')) forbidden('at most one of `sinceTime` or `sinceSeconds` may be specified');
  else if (since !== undefined && since < 1) invalid('sinceSeconds', String(since), 'must be greater than 0');
  const stream = q.get('stream');
  if (stream !== null) {
    if (!['All', 'Stdout', 'Stderr'].includes(stream)) {
      causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: "${stream}": supported values: "All", "Stderr", "Stdout"`, field: 'stream' });
    }
    if (stream !== 'All' && tail !== undefined) forbidden('`tailLines` and specific `stream` are mutually exclusive for now');
  }
  if (causes.length) throw invalidOptions('PodLogOptions', undefined, podName, causes);
}

export async function handleLog(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { rt, namespace, name } = r.route;
  validateLogOptions(r.url.searchParams, name!);
  const pod = ctx.store.get(rt, namespace, name!);
  const opts = logOptions(r.url.searchParams, chooseContainer(pod, r.url.searchParams.get('container')));
  const stream = await ctx.node.logs(pod, opts);
  r.res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  r.res.flushHeaders();
  const finish = () => {
    ctx.liveStreams.delete(finish);
    stream.destroy();
    if (!r.res.writableEnded) r.res.end();
  };
  ctx.liveStreams.add(finish);
  r.req.on('close', finish);
  r.res.on('close', finish);
  // as fast as the client takes it, not all at once into memory; `finish` ends the response
  stream.pipe(r.res, { end: false });
  stream.on('end', finish);
  // The dropStreams fault cuts a followed log too: the connection goes without the chunked terminator,
  // as when a node or proxy in between fails, after its first output or 100 ms.
  if (opts.follow && Math.random() < ctx.faults.dropStreams) {
    const cut = (): void => {
      clearTimeout(timer);
      r.res.socket?.destroy();
    };
    const timer = setTimeout(cut, 100);
    stream.once('data', () => setImmediate(cut));
  }
  stream.on('error', (e) => {
    process.stderr.write(`devcluster apiserver: log stream of pod ${namespace}/${name} failed: ${e.message}\n`);
    finish();
  });
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

/** exec, attach, portforward after authentication and authorization; answers failures on the socket */
export function handlePodUpgrade(ctx: ServerContext, r: { req: IncomingMessage; url: URL; route: ResourceRequest['route'] }, socket: Duplex, head: Buffer): void {
  const { rt, namespace, name, subresource } = r.route;
  const q = r.url.searchParams;
  const pod = ctx.store.get(rt, namespace, name!);
  const phase = pod.status?.phase as string | undefined;
  if (subresource === 'portforward') {
    const ports = q.getAll('ports').flatMap((p) => p.split(',')).filter((p) => p.trim() !== '').map((p) => {
      const n = Number(p.trim());
      if (!Number.isInteger(n) || n < 1 || n > 65535) throw badRequest(`invalid port: ${p}`);
      return n;
    });
    if (phase && TERMINAL_PHASES.has(phase)) throw badRequest(`cannot port forward to a completed pod; current phase is ${phase}`);
    handlePortForwardUpgrade(r.req, socket, head, ports, (port) => ctx.node.portForward(pod, port), ctx.faults);
    return;
  }
  const container = chooseContainer(pod, q.get('container'));
  const flags = { stdin: queryBool(q, 'stdin'), stdout: queryBool(q, 'stdout'), stderr: queryBool(q, 'stderr'), tty: queryBool(q, 'tty') };
  if (!flags.stdin && !flags.stdout && !flags.stderr) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  if (subresource === 'exec') {
    const command = q.getAll('command');
    if (!command.length) throw badRequest('you must specify at least 1 command');
    if (phase && TERMINAL_PHASES.has(phase)) throw badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`);
    handleRemoteCommandUpgrade(r.req, socket, head, () => ctx.node.exec(pod, { container, command, ...flags }), ctx.faults);
    return;
  }
  if (phase && TERMINAL_PHASES.has(phase)) throw badRequest(`cannot attach to a container in a completed pod; current phase is ${phase}`);
  handleRemoteCommandUpgrade(r.req, socket, head, () => ctx.node.attach(pod, { container, ...flags }), ctx.faults);
}
