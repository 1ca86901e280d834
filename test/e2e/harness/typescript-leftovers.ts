// What the TypeScript dev cluster could leave: podman containers and pods labeled with its id, and its server process.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface TsState {
  clusterId: string;
  pid: number;
}

export const typescriptLeftovers = {
  read(stateDir: string): TsState {
    return JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
  },
  check({ clusterId, pid }: TsState): string[] {
    const filter = `label=io.berth.dev-cluster=${clusterId}`;
    const list = (args: string[]) => execFileSync('podman', [...args, '-q', '--filter', filter], { encoding: 'utf8' }).split('\n').filter(Boolean);
    const left = [...list(['ps', '-a']).map((c) => `podman container ${c}`), ...list(['pod', 'ps']).map((p) => `podman pod ${p}`)];
    try {
      process.kill(pid, 0);
      left.push(`server process ${pid}`);
    } catch {
      // gone, as it should be
    }
    return left;
  },
};
