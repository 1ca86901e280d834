// What the resource-step e2e files share: the plan of fixtures/plan-resources.yml, its pinned variant, and a
// plan runner with the local busybox image (images/test-resource is the resource type's own image).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { berthCli, BUSYBOX } from '../harness/cluster.js';
import { FIXTURES, runCommand, type TaskEnv } from './task-env.js';

export const RESOURCES_PLAN = readFileSync(join(FIXTURES, 'plan-resources.yml'), 'utf8');
/** The same plan with the get pinned to version 1.2: no check pod (the first get test covers check). */
export const pinned = (plan: string): string => plan.replace('params: { greeting: hi }', 'params: { greeting: hi }\n    version: { ver: "1.2" }');

/** Each test runs a plan of several pods one after another: minutes on a loaded machine. */
export const PLAN_TIMEOUT = { timeout: 360_000 };

export const planRunner = (t: () => TaskEnv) => (args: string[]) =>
  runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', ...args, '--image', BUSYBOX], { env: t().env(), timeoutMs: 300_000 });
