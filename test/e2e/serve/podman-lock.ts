// One podman reference at a time on this machine. Two test files run at once, and the podman reference's checks
// read podman's whole state (`volume ls`, prune, `ps -a`): another file's podman containers and volumes would
// show in them (an anonymous-volume check failed so). berth's side needs no lock: each file has its own namespace.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../util/eventually.js';
import { alive } from '../../../src/devcluster/processes.js';

const LOCK = join(tmpdir(), 'berth-e2e-podman-reference.lock');
let held = 0;

function tryTake(): boolean {
  try {
    mkdirSync(LOCK);
  } catch {
    // a holder that died (a killed test run) does not hold it any more
    const owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8').trim() || 0);
    if (owner && !alive(owner)) rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(LOCK, 'pid'), String(process.pid));
  return true;
}

/** Waits (a file's podman part lasts a minute or two) until this process holds the lock; re-entrant. */
export async function takePodmanLock(): Promise<void> {
  if (held === 0) await eventually('the podman reference lock', () => tryTake(), { timeoutMs: 900_000, intervalMs: 250 });
  held++;
}

export function releasePodmanLock(): void {
  if (held === 0) return;
  held--;
  if (held === 0) rmSync(LOCK, { recursive: true, force: true });
}
