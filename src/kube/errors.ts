/**
 * Cluster failures as sentences that name the cause and the fix. client-node reports a failed call
 * as an ApiException whose body is the server's Status JSON (a string), and a failed connection as a
 * plain Node error; WebSocket upgrades fail as "Unexpected server response: NNN" unless streams.ts
 * captured the Status body.
 */
import { RetriesSpent } from './backoff.js';

export const SHIM_ROLE_PATH = 'deploy/rbac/shim-role.yaml';

/**
 * What a face's errors tell the user to change: its own namespace setting and the Role file it ships.
 * Each face (docker shim, berth serve, …) supplies its own; a failure never sends the user to another
 * face's flag or Role.
 */
export interface FaceHints {
  /** How the user picks the namespace: `BERTH_NAMESPACE`, `--namespace (-n)`. */
  namespaceSetting: string;
  /** The Role manifest that grants what the face needs. */
  roleFile: string;
  /** How the user picks the kubeconfig and context (absent: `--context`, or the shim's `BERTH_CONTEXT`). */
  contextSetting?: string;
}

/** The docker shim's (and the default when a caller names none). */
export const SHIM_HINTS: FaceHints = { namespaceSetting: 'BERTH_NAMESPACE', roleFile: SHIM_ROLE_PATH };

export interface KubeAction {
  /** API verb as RBAC names it: create, get, list, watch, delete. */
  verb: string;
  /** Resource with optional subresource: `pods`, `pods/attach`. */
  resource: string;
  namespace?: string;
  name?: string;
  /** Server URL, for connection errors. */
  server?: string;
  /** The face's own namespace setting and Role file (default: the shim's). */
  hints?: FaceHints;
}

export interface StatusLike {
  code?: number;
  reason?: string;
  message?: string;
  details?: { name?: string; kind?: string; group?: string; causes?: Array<{ message?: string; field?: string }> };
}

/**
 * An error that already reads as a sentence for the user. `action` is what failed, so that a face can
 * tell it again with its own hints (rehintKubeError).
 */
export class KubeError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly reason?: string,
    override readonly cause?: unknown,
    readonly action?: KubeAction,
  ) {
    super(message);
    this.name = 'KubeError';
  }

  /**
   * On a failed create: true when no try can have made the object (each was refused by the server or
   * never reached it). Unset, the object may exist all the same: a try's answer was lost.
   */
  createdNothing?: boolean;
}

/** Whether a failed create may have made its object all the same; only a create known to have made nothing says no. */
export function createMayHaveLanded(err: unknown): boolean {
  return !(err instanceof KubeError && err.createdNothing === true);
}

/**
 * A failure that shows the request made nothing: the server answered it with a refusal (4xx), or it never
 * reached the server (no connection, no name, no trusted TLS). A lost answer, a timeout or a 5xx may
 * follow a request the server carried out.
 */
export function madeNothing(err: unknown): boolean {
  const { code } = statusOf(err);
  if (code !== undefined) return code >= 400 && code < 500;
  return connectFailure(err) !== undefined;
}

/** The code of an error raised before a request could be sent (connect, DNS, TLS), wherever it is in the cause chain. */
function connectFailure(err: unknown): string | undefined {
  for (const { code } of causeChain(err)) {
    if (
      typeof code === 'string' &&
      /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT)/.test(code)
    )
      return code;
  }
  return undefined;
}

export type ChainLink = { code?: unknown; message?: unknown; cause?: unknown };

/** The error and the causes it wraps (client-node and KubeError nest the network error), each once. */
export function causeChain(err: unknown): ChainLink[] {
  const chain: ChainLink[] = [];
  for (let cur = err; cur && typeof cur === 'object' && !chain.includes(cur); cur = (cur as ChainLink).cause) chain.push(cur);
  return chain;
}

/** True when the cluster could not be reached at all (no answer of any kind). */
export function isUnreachable(err: unknown): boolean {
  return statusOf(err).code === undefined && networkCause(err) !== undefined;
}

/**
 * A stream (exec, attach, port-forward) that ended without the server's status: the connection went, and
 * what the command did meanwhile is unknown. A caller whose command only reads may run it again.
 */
export class StreamLost extends KubeError {
  constructor(message: string, cause?: unknown) {
    super(message, undefined, undefined, cause);
    this.name = 'StreamLost';
  }
}

export function statusOf(err: unknown): { code?: number; status?: StatusLike } {
  if (!err || typeof err !== 'object') return {};
  // retries that ran out end with the server's last answer: that is what a caller asks about
  if (err instanceof RetriesSpent) return statusOf(err.last);
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; status?: StatusLike };
  const code = typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  let status: StatusLike | undefined;
  if (typeof e.body === 'string') {
    try {
      status = JSON.parse(e.body) as StatusLike;
    } catch {
      status = undefined;
    }
  } else if (e.body && typeof e.body === 'object') status = e.body as StatusLike;
  if (!status && e.status && typeof e.status === 'object') status = e.status;
  return { code: code ?? status?.code, status };
}

/** a response body that is not a Status (the kubelet answers a refused attach in plain text) */
function plainBody(err: unknown): string | undefined {
  const body = (err as { body?: unknown } | null)?.body;
  return typeof body === 'string' && body.trim() ? body.trim() : undefined;
}

export function describeKubeError(err: unknown, action: KubeAction, retried?: string): string {
  if (err instanceof KubeError) return err.message;
  const where = action.namespace ? ` in namespace ${action.namespace}` : '';
  const net = networkCause(err);
  if (net) {
    // how long it was retried belongs to the cause; the fix stays the sentence's last words
    const tried = retried ? `, ${retried}` : '';
    return `cannot reach the cluster at ${action.server ?? 'its server'}: ${net}${tried} (is it running? check KUBECONFIG and the context: ${action.hints?.contextSetting ?? '--context, or BERTH_CONTEXT for the docker shim'})`;
  }
  const { code, status } = statusOf(err);
  const message = status?.message ?? (err instanceof Error ? err.message : (plainBody(err) ?? String(err)));
  switch (code) {
    case 401:
      return `the cluster at ${action.server ?? 'its server'} rejected berth's credentials (401 Unauthorized): the token or certificate is invalid or expired (refresh the kubeconfig, or check the service account token)`;
    case 403: {
      const denied = parseForbidden(message) ?? { verb: action.verb, resource: action.resource, namespace: action.namespace };
      const ns = denied.namespace ? ` in namespace ${denied.namespace}` : '';
      return `forbidden: cannot ${denied.verb} ${denied.resource}${ns} (grant it in the Role: ${(action.hints ?? SHIM_HINTS).roleFile})`;
    }
    case 404:
      if (status?.details?.kind === 'namespaces' || /namespaces? ".*" not found/.test(message)) {
        return `namespace ${action.namespace ?? ''} does not exist (create it, or pick another with ${(action.hints ?? SHIM_HINTS).namespaceSetting})`;
      }
      return `${action.resource}${action.name ? ` ${action.name}` : ''} not found${where}: ${message}`;
    case 409:
      return `${action.resource}${action.name ? ` ${action.name}` : ''} already exists${where}: ${message}`;
    case 410:
      return `the watch on ${action.resource}${where} expired (410 Gone): ${message}`;
    case 422:
      return `the cluster refused the ${singular(action.resource)}${where}: ${message}`;
    case 429:
      return `the cluster is throttling berth (429 Too Many Requests) while trying to ${action.verb} ${action.resource}${where}: retry later`;
  }
  if (code !== undefined && code >= 500) {
    return `the cluster failed to ${action.verb} ${action.resource}${where} (${code}${status?.reason ? ` ${status.reason}` : ''}): ${message}`;
  }
  if (code !== undefined) return `cannot ${action.verb} ${action.resource}${where} (${code}): ${message}`;
  return `cannot ${action.verb} ${action.resource}${where}: ${message}`;
}

/** Wraps any failure of `action` into a KubeError carrying the sentence. */
export function toKubeError(err: unknown, action: KubeAction): KubeError {
  if (err instanceof KubeError) return err;
  if (err instanceof RetriesSpent) return retriedKubeError(err, action);
  const { code, status } = statusOf(err);
  return new KubeError(describeKubeError(err, action), code, status?.reason, err, action);
}

/** The last failure's sentence, and how long it was retried. Its cause stays the RetriesSpent, so a face's hints keep the note. */
function retriedKubeError(spent: RetriesSpent, action: KubeAction): KubeError {
  const last = spent.last instanceof KubeError && action.hints ? rehintKubeError(spent.last, action.hints) : toKubeError(spent.last, action);
  let cause = last.cause;
  while (cause instanceof KubeError && cause.cause !== undefined) cause = cause.cause;
  const unreachable = cause !== undefined && !(cause instanceof KubeError) && networkCause(cause) !== undefined;
  const message = unreachable ? describeKubeError(cause, last.action ?? action, spent.note) : `${last.message} (${spent.note})`;
  return new KubeError(message, last.code, last.reason, spent, last.action ?? action);
}

/** The same failure told with a face's own hints (its namespace setting, its Role file). */
export function rehintKubeError(err: KubeError, hints: FaceHints): KubeError {
  if (!err.action || err.cause === undefined) return err;
  return toKubeError(err.cause, { ...err.action, hints });
}

/**
 * The API server's own wording: `pods "x" is forbidden: User "u" cannot create resource "pods/attach"
 * in API group "" in the namespace "ci"`.
 */
export function parseForbidden(message: string): { verb: string; resource: string; namespace?: string } | undefined {
  const m = /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?/.exec(message);
  if (!m) return undefined;
  const resource = m[3] ? `${m[2].split('/')[0]}.${m[3]}${m[2].includes('/') ? `/${m[2].split('/')[1]}` : ''}` : m[2];
  return { verb: m[1], resource, namespace: m[4] };
}

function networkCause(err: unknown): string | undefined {
  for (const e of causeChain(err)) {
    if (
      typeof e.code === 'string' &&
      /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS)/.test(e.code)
    ) {
      if (typeof e.message === 'string' && e.message) return e.message.replace(/^request to \S+ failed, reason: /, '');
      return e.code;
    }
    if (typeof e.message === 'string' && /(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|certificate|self[- ]signed)/i.test(e.message) && !('body' in e)) {
      return e.message.replace(/^request to \S+ failed, reason: /, '');
    }
  }
  return undefined;
}

function singular(resource: string): string {
  return resource.replace(/s$/, '').replace(/^networkpolicie$/, 'networkpolicy');
}
