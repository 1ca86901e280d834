// The serve Engine as the unit tests make it: on a fake cluster, its image pulled, its pod watch started.
import { Engine, type EngineOptions } from '../../../src/dockerapi/engine.js';
import type { FakeCluster } from './fake-cluster.js';

/** The image every unit container runs (pulled before each test's first create). */
export const UNIT_IMAGE = 'localhost/berth/busybox:1';

export function unitEngine(cluster: FakeCluster, more: Partial<EngineOptions> = {}): Engine {
  const engine = new Engine({ cluster, owner: 'unit', ttlSeconds: 600, publishAddress: '127.0.0.1', startTimeoutMs: 2000, allowPrivileged: false, ...more });
  engine.images.pull(UNIT_IMAGE);
  engine.startWatch();
  return engine;
}
