// A few podman pods made ahead of time, their infra running and their IP known, so an ordinary pod starts
// with one podman call (its container's `podman run`) instead of four. Pods that need a special sandbox
// (the host's network) still get their own. Pods isolated by a deny-all NetworkPolicy (berth's shim runs every
// `--network none` function so) have a pool of their own, of sandboxes without a network. Pool sandboxes do not share the UTS namespace:
// each container gets the pod's hostname itself, since a pod's name is not known when its sandbox is made.
import { randomBytes } from 'node:crypto';
import { CLUSTER_LABEL, POD_SHM_BYTES } from './podman-args.js';
import { podmanMessage, type PodmanCli } from './podman-cli.js';

export const POOL_LABEL = 'io.berth.sandbox-pool';

export interface Sandbox {
  /** the podman pod */
  name: string;
  infraName: string;
  /** pid of the infra container: its network namespace is the pod's */
  infraPid: number;
  /** '' for a sandbox without a network */
  ip: string;
}

/** `podman`: the pod network; `none`: loopback only (an isolated pod) */
export type SandboxNetwork = 'podman' | 'none';

export function poolSandboxArgs(clusterId: string, name: string, network: SandboxNetwork = 'podman'): string[] {
  return ['pod', 'create', '--name', name, '--infra-name', `${name}-infra`, '--share', 'ipc,net', '--shm-size', String(POD_SHM_BYTES), '--no-hosts', '--label', `${CLUSTER_LABEL}=${clusterId}`, '--label', `${POOL_LABEL}=true`, '--network', network];
}

export class SandboxPool {
  private readonly ready: Sandbox[] = [];
  private filling?: Promise<void>;
  private stopped = false;
  private failures = 0;
  private onStop!: () => void;
  private readonly stopping = new Promise<void>((resolve) => (this.onStop = resolve));

  /**
   * cli: the podman the pool fills with; a lower-priority one keeps refills from slowing pods being started.
   * size: sandboxes kept ready; 0 turns the pool off. idle: resolves when a refill would slow nothing down.
   */
  constructor(
    private readonly cli: PodmanCli,
    private readonly clusterId: string,
    private readonly size: number,
    private readonly idle: () => Promise<void> = () => Promise.resolve(),
    private readonly network: SandboxNetwork = 'podman',
  ) {}

  /** a ready sandbox, now owned by the caller (it removes the podman pod), or undefined: make one */
  take(): Sandbox | undefined {
    const sandbox = this.ready.shift();
    this.failures = 0;
    this.fill();
    return sandbox;
  }

  /** brings the pool up to size in the background, one sandbox at a time */
  fill(): void {
    if (this.filling || this.stopped || this.ready.length >= this.size) return;
    this.filling = (async () => {
      while (!this.stopped && this.ready.length < this.size && this.failures < 3) {
        await Promise.race([this.idle(), this.stopping]);
        if (this.stopped) break;
        const sandbox = await this.make();
        if (!sandbox) {
          this.failures++;
          continue;
        }
        this.failures = 0;
        if (this.stopped) await this.remove(sandbox.name);
        else this.ready.push(sandbox);
      }
    })().finally(() => (this.filling = undefined));
  }

  /** no more refills; the ready sandboxes are removed */
  async stop(): Promise<void> {
    this.stopped = true;
    this.onStop();
    await this.filling;
    const names = this.ready.splice(0).map((s) => s.name);
    if (names.length > 0) await this.cli.run(['pod', 'rm', '-f', '-t', '0', ...names], 60_000);
  }

  private async make(): Promise<Sandbox | undefined> {
    const name = `${this.clusterId}-sandbox-${randomBytes(4).toString('hex')}`;
    const infraName = `${name}-infra`;
    const created = await this.cli.run(poolSandboxArgs(this.clusterId, name, this.network));
    if (created.code !== 0) return this.failed(name, podmanMessage(created));
    const started = await this.cli.run(['start', infraName]);
    if (started.code !== 0) return this.failed(name, podmanMessage(started));
    const inspected = await this.cli.run(['inspect', infraName, '--format', '{{.State.Pid}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}']);
    const [pid, ip = ''] = inspected.stdout.trim().split(/\s+/);
    if (inspected.code !== 0 || !Number(pid) || (!ip && this.network !== 'none')) return this.failed(name, podmanMessage(inspected) || 'no pid or IP');
    return { name, infraName, infraPid: Number(pid), ip };
  }

  private async failed(name: string, why: string): Promise<undefined> {
    process.emitWarning(`berth dev-cluster node: could not prepare a pod sandbox: ${why}`);
    await this.remove(name);
    return undefined;
  }

  private async remove(name: string): Promise<void> {
    await this.cli.run(['pod', 'rm', '-f', '-t', '0', name], 60_000);
  }
}
