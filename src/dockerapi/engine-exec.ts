/**
 * Commands run in a container's pod (collected, or streamed for `docker exec`), and the peek pod that
 * reads the files of a container without a running one (containers/peek.ts).
 */
import type { Readable, Writable } from 'node:stream';
import { SANDBOX_CONTAINER } from '../runtime/sandbox-plan.js';
import type { PodTemplateSource } from '../runtime/workload.js';
import { conflict } from './http/http.js';
import type { PeekSource } from './containers/peek.js';
import type { ContainerRecord } from './model.js';
import { peekPodName, planPeekPod } from './containers/container-pod.js';
import type { EngineState, ExecResult } from './engine-state.js';

export class ExecPath {
  constructor(
    private readonly s: EngineState,
    private readonly deps: { readTemplate(name: string | undefined): Promise<PodTemplateSource | undefined> },
  ) {}

  async execCollect(c: ContainerRecord, argv: string[]): Promise<ExecResult> {
    if (!c.podName) throw conflict(`container ${c.name} is not running`);
    return this.s.files.execInPod(c.podName, argv);
  }

  async execStream(c: ContainerRecord, argv: string[], io: { stdin?: Readable; stdout: Writable; stderr: Writable; tty?: boolean }): Promise<number> {
    if (!c.podName || c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    const { done } = await this.s.cluster.exec(c.podName, SANDBOX_CONTAINER, argv, io);
    return (await done).exitCode;
  }

  peekSource(c: ContainerRecord): PeekSource {
    return {
      name: c.name,
      image: c.image,
      podName: (n) => peekPodName(c, n),
      plan: async (podName) => planPeekPod(c, podName, await this.deps.readTemplate(c.plan.templateName), this.s.podContext),
      fill: async (podName) => {
        for (const a of [...c.copiedArchives, ...c.pendingArchives]) await this.s.files.extractInPod(podName, a.path, a.tar);
      },
    };
  }
}
