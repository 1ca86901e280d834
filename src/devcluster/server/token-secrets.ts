// The tokens controller (pkg/controller/serviceaccount/tokens_controller.go) for Secrets of type
// kubernetes.io/service-account-token, the "long-lived API token" the Kubernetes docs have users create by
// hand: it fills in `token`, `ca.crt` and `namespace` and the ServiceAccount's uid annotation, deletes such a
// Secret whose ServiceAccount does not exist (or is another one of the same name), and deletes the Secrets
// of a ServiceAccount when it is deleted.
import { ApiError } from '../api/errors.js';
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, WatchHandle } from '../types.js';
import type { ServerContext } from './handlers-context.js';
import { deleteObject } from './handlers-delete.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const UID_ANNOTATION = 'kubernetes.io/service-account.uid';

const SECRET = resourceByKind('Secret');
const SA = resourceByKind('ServiceAccount');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

export class TokenSecretController {
  private handles: WatchHandle[] = [];
  private readonly pending: (() => void)[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly tokens: ServiceAccountTokens,
    private readonly caPem: string,
  ) {}

  start(): void {
    const from = { resourceVersion: this.ctx.store.resourceVersion() };
    this.handles = [
      this.ctx.store.watch(SECRET, undefined, from, (e) => {
        if (e.type === 'ADDED' || e.type === 'MODIFIED') this.enqueue(() => this.syncSecret(e.object.metadata.namespace!, e.object.metadata.name!));
      }),
      this.ctx.store.watch(SA, undefined, from, (e) => {
        if (e.type === 'DELETED') this.enqueue(() => this.deleteTokensOf(e.object));
      }),
    ];
  }

  stop(): void {
    for (const h of this.handles) h.stop();
    this.handles = [];
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }

  // work runs after the write that triggered it has been answered, never inside the store's own write
  private enqueue(work: () => void): void {
    this.pending.push(work);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      for (const w of this.pending.splice(0)) {
        try {
          w();
        } catch (e) {
          if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) process.stderr.write(`devcluster tokens controller: ${(e as Error).stack ?? e}\n`);
        }
      }
    });
  }

  private syncSecret(namespace: string, name: string): void {
    const secret = this.ctx.store.tryGet(SECRET, namespace, name);
    if (!secret || secret.type !== SERVICE_ACCOUNT_TOKEN_TYPE || secret.metadata.deletionTimestamp) return;
    const saName = secret.metadata.annotations?.[NAME_ANNOTATION];
    if (!saName) return;
    const sa = this.ctx.store.tryGet(SA, namespace, saName);
    const uid = secret.metadata.annotations?.[UID_ANNOTATION];
    // no such ServiceAccount, or another one of the same name: the Secret goes
    if (!sa || (uid && uid !== sa.metadata.uid)) {
      deleteObject(this.ctx, SECRET, namespace, name, {});
      return;
    }
    if (secret.data?.token && secret.data['ca.crt'] && secret.data.namespace) return;
    const token = this.tokens.issueLegacy(namespace, { name: saName, uid: sa!.metadata.uid ?? '' }, name);
    this.ctx.store.mutate(SECRET, namespace, name, (s) => {
      s.metadata.annotations = { ...(s.metadata.annotations ?? {}), [UID_ANNOTATION]: sa!.metadata.uid ?? '' };
      s.data = { ...(s.data ?? {}), token: b64(token), 'ca.crt': b64(this.caPem), namespace: b64(namespace) };
    });
  }

  private deleteTokensOf(sa: KubeObject): void {
    const namespace = sa.metadata.namespace!;
    for (const s of this.ctx.store.list(SECRET, namespace).items) {
      if (s.type !== SERVICE_ACCOUNT_TOKEN_TYPE || s.metadata.annotations?.[NAME_ANNOTATION] !== sa.metadata.name) continue;
      const uid = s.metadata.annotations?.[UID_ANNOTATION];
      if (uid && uid !== sa.metadata.uid) continue;
      deleteObject(this.ctx, SECRET, namespace, s.metadata.name!, {});
    }
  }
}
