// The dev cluster's HTTPS API server: authentication and RBAC on every request, discovery, the REST
// resources, watches, pod logs and the exec/attach/portforward upgrades, plus the controllers a real
// control plane runs for namespaces and garbage collection.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { ApiError, forbidden, internalError, methodNotAllowed, unauthorized } from '../api/errors.js';
import { allocateClusterIp } from '../api/defaults.js';
import { nodePortsOf } from '../api/node-ports.js';
import { resourceByKind } from '../api/resources.js';
import { writeStatusResponse } from '../streams/http-error.js';
import type { Faults, NodeRuntime, ObjectStore, RequestAttributes, UserInfo } from '../types.js';
import { DEFAULT_MAX_BODY_BYTES } from './body.js';
import { discoveryResponse } from './discovery.js';
import { openApiV2 } from './openapi-v2.js';
import { FAULTS_PATH, handleFaults, handleSelfSubjectAccessReview } from './handlers-admin.js';
import { sendError, sendJson, sendText, toApiError, type Authenticator, type Authorizer, type ResourceRequest, type ServerContext } from './handlers-context.js';
import { handleCreate, handleGet, handleList, handlePatch, handleUpdate, handleWatch } from './handlers-crud.js';
import { deleteObject, handleDelete, handleDeleteCollection } from './handlers-delete.js';
import { GarbageCollector } from './handlers-gc.js';
import { NamespaceController } from './handlers-namespaces.js';
import { handleLog, handlePodUpgrade } from './handlers-pods.js';
import { impersonate } from './impersonation.js';
import { handleSelfSubjectReview, handleSelfSubjectRulesReview } from './handlers-self-reviews.js';
import { handleTokenRequest } from './handlers-token-request.js';
import { TokenSecretController } from './token-secrets.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';
import { isStreamSubresource, parseResourcePath, requestVerb, type ResourceRoute } from './handlers-route.js';

export interface ApiServerOptions {
  store: ObjectStore;
  node: NodeRuntime;
  authenticator: Authenticator;
  authorizer: Authorizer;
  faults: Faults;
  tls: { cert: string; key: string };
  /** default 3 MiB, the real server's limit */
  maxBodyBytes?: number;
  /** the cluster CA, published in every namespace's kube-root-ca.crt ConfigMap */
  caPem?: string;
  /** the service account signing key, for the TokenRequest API */
  serviceAccountTokens?: ServiceAccountTokens;
}

/** the create-only kinds answered about the caller and never stored */
const REVIEWS: Record<string, (ctx: ServerContext, r: ResourceRequest) => Promise<void>> = {
  SelfSubjectAccessReview: handleSelfSubjectAccessReview,
  SelfSubjectRulesReview: handleSelfSubjectRulesReview,
  SelfSubjectReview: handleSelfSubjectReview,
};

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

const notFoundPath = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

function nonResourceForbidden(user: UserInfo, verb: string, path: string): ApiError {
  return new ApiError(403, 'Forbidden', `forbidden: User "${user.name}" cannot ${verb} path "${path}"`, {});
}

/** the verb RBAC sees for a non-resource request */
function nonResourceVerb(method: string | undefined): string {
  switch (method) {
    case 'POST':
      return 'post';
    case 'PUT':
      return 'put';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    case 'HEAD':
      return 'head';
    default:
      return 'get';
  }
}

function requestUrl(req: IncomingMessage): URL {
  return new URL(req.url ?? '/', 'https://devcluster.invalid');
}

export class ApiServer {
  /** one HTTPS server per address listened on (loopback for clients, the pod network's gateway for pods) */
  private readonly servers: Server[] = [];
  private readonly ctx: ServerContext;
  private readonly gc: GarbageCollector;
  private readonly namespaces: NamespaceController;
  private readonly tokenSecrets?: TokenSecretController;
  private readonly upgraded = new Set<Duplex>();
  private closed = false;

  constructor(private readonly opts: ApiServerOptions) {
    const gcRef: { gc?: GarbageCollector } = {};
    this.ctx = {
      store: opts.store,
      node: opts.node,
      faults: opts.faults,
      authorizer: opts.authorizer,
      maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      allocateClusterIp: () => {
        const used = new Set(opts.store.list(resourceByKind('Service'), undefined).items.map((s) => s.spec?.clusterIP as string));
        return allocateClusterIp(used);
      },
      nodePortsInUse: (exceptUid) => {
        const services = opts.store.list(resourceByKind('Service'), undefined).items.filter((s) => s.metadata.uid !== exceptUid);
        return new Set(services.flatMap(nodePortsOf));
      },
      deletion: { orphan: (uid) => gcRef.gc?.orphan(uid) },
      liveStreams: new Set(),
      serviceAccountTokens: opts.serviceAccountTokens,
    };
    this.gc = gcRef.gc = new GarbageCollector(opts.store, (rt, ns, name) => {
      deleteObject(this.ctx, rt, ns, name, { propagationPolicy: 'Background' });
    });
    this.namespaces = new NamespaceController(this.ctx, opts.caPem);
    this.namespaces.bootstrap();
    this.gc.start();
    this.namespaces.start();
    if (opts.serviceAccountTokens) {
      this.tokenSecrets = new TokenSecretController(this.ctx, opts.serviceAccountTokens, opts.caPem ?? '');
      this.tokenSecrets.start();
    }

  }

  private newServer(): Server {
    const server = createServer({ cert: this.opts.tls.cert, key: this.opts.tls.key });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    server.on('tlsClientError', () => {
      // a client that gives up the handshake (curl without the CA, port scanners) is no server error
    });
    return server;
  }

  /** serves on one more address; resolves to the port (useful with port 0) */
  listen(port: number, host = '127.0.0.1'): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the API server is closed'));
    const server = this.newServer();
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        this.servers.push(server);
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  /** ends watches, log streams and upgraded sessions, stops the controllers and closes the server */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.gc.stop();
    this.namespaces.stop();
    this.tokenSecrets?.stop();
    for (const end of [...this.ctx.liveStreams]) end();
    for (const s of this.upgraded) s.destroy();
    this.upgraded.clear();
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }

  // ---- plain requests ----

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (e) {
      sendError(res, e);
    }
  }

  /** the user a request runs as: its token's user, or whom the Impersonate-* headers name when that user may */
  private authenticate(req: IncomingMessage): UserInfo {
    const user = this.opts.authenticator.authenticate(req.headers.authorization);
    if (!user) throw unauthorized();
    return impersonate(user, req, this.opts.authorizer);
  }

  private authorize(user: UserInfo, attrs: RequestAttributes): void {
    const decision = this.opts.authorizer.authorize(user, attrs);
    if (decision.allowed) return;
    if (attrs.nonResourcePath !== undefined) throw nonResourceForbidden(user, attrs.verb, attrs.nonResourcePath);
    throw forbidden(user.name, attrs.verb, { plural: attrs.resource, group: attrs.apiGroup }, attrs.subresource, attrs.namespace, attrs.name);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req);
    const path = url.pathname;
    if (HEALTH_PATHS.has(path.replace(/\/+$/, '')) && (req.method === 'GET' || req.method === 'HEAD')) {
      sendText(res, 200, 'ok');
      return;
    }
    const user = this.authenticate(req);
    if (path === FAULTS_PATH) {
      await handleFaults(this.ctx, req, res, user);
      return;
    }
    const route = parseResourcePath(path);
    if (!route) {
      this.authorize(user, { verb: nonResourceVerb(req.method), apiGroup: '', resource: '', nonResourcePath: path });
      this.injectFault();
      if (req.method === 'GET' && path.replace(/\/+$/, '') === '/openapi/v2') {
        const v2 = openApiV2(req.headers.accept);
        res.writeHead(200, { 'Content-Type': v2.contentType, 'Content-Length': v2.body.length, 'Cache-Control': 'no-cache, private' });
        res.end(v2.body);
        return;
      }
      const doc = req.method === 'GET' ? discoveryResponse(path, req.headers.accept) : undefined;
      if (!doc) throw notFoundPath();
      sendJson(res, 200, doc.body, doc.contentType);
      return;
    }
    const verb = requestVerb(req.method ?? 'GET', route, url.searchParams);
    if (!verb) throw methodNotAllowed('the server does not allow this method on the requested resource');
    this.authorize(user, this.attributes(verb, route));
    if (isStreamSubresource(route.subresource)) throw new ApiError(400, 'BadRequest', 'Upgrade request required');
    this.injectFault();
    await this.dispatch({ req, res, url, user, route, verb });
  }

  private attributes(verb: string, route: ResourceRoute): RequestAttributes {
    const attrs: RequestAttributes = { verb, apiGroup: route.rt.group, resource: route.rt.plural };
    if (route.subresource) attrs.subresource = route.subresource;
    if (route.namespace !== undefined) attrs.namespace = route.namespace;
    else if (route.rt.kind === 'Namespace' && route.name !== undefined) attrs.namespace = route.name;
    if (route.name !== undefined) attrs.name = route.name;
    return attrs;
  }

  /** the error500 fault: a share of API requests fails as an overloaded real server's would */
  private injectFault(): void {
    if (this.ctx.faults.error500 > 0 && Math.random() < this.ctx.faults.error500) throw internalError('injected by the dev cluster error500 fault');
  }

  private async dispatch(r: ResourceRequest): Promise<void> {
    const { rt, subresource } = r.route;
    const allowed = subresource ? true : rt.verbs.includes(r.verb);
    if (!allowed) throw methodNotAllowed('the server does not allow this method on the requested resource');
    if (subresource === 'log') {
      if (r.verb !== 'get') throw methodNotAllowed('the server does not allow this method on the requested resource');
      await handleLog(this.ctx, r);
      return;
    }
    if (subresource === 'token') {
      if (r.verb !== 'create') throw methodNotAllowed('the server does not allow this method on the requested resource');
      await handleTokenRequest(this.ctx, r);
      return;
    }
    if (subresource === 'status' && !['get', 'update', 'patch'].includes(r.verb)) {
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    }
    const review = REVIEWS[rt.kind];
    if (review) {
      await review(this.ctx, r);
      return;
    }
    switch (r.verb) {
      case 'get':
        handleGet(this.ctx, r);
        return;
      case 'list':
        handleList(this.ctx, r);
        return;
      case 'watch':
        handleWatch(this.ctx, r);
        return;
      case 'create':
        await handleCreate(this.ctx, r);
        return;
      case 'update':
        await handleUpdate(this.ctx, r);
        return;
      case 'patch':
        await handlePatch(this.ctx, r);
        return;
      case 'delete':
        await handleDelete(this.ctx, r);
        return;
      case 'deletecollection':
        await handleDeleteCollection(this.ctx, r);
        return;
      default:
        throw methodNotAllowed('the server does not allow this method on the requested resource');
    }
  }

  // ---- upgrades: exec, attach, portforward ----

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    (socket as Socket).setNoDelay?.(true);
    try {
      const url = requestUrl(req);
      const route = parseResourcePath(url.pathname);
      const user = this.authenticate(req);
      if (!route || !isStreamSubresource(route.subresource) || route.name === undefined) {
        // nothing but the pod streams upgrades; answer as the real server answers an unknown path
        throw notFoundPath();
      }
      // WebSocket upgrades are GETs, yet the real server (1.35+) checks `create`, which berth's Role grants
      this.authorize(user, this.attributes('create', route));
      handlePodUpgrade(this.ctx, { req, url, route }, socket, head);
    } catch (e) {
      writeStatusResponse(socket, toApiError(e));
    }
  }
}
