// Child process of bench/serve.ts: N concurrent testcontainers-node GenericContainer starts against the
// engine in DOCKER_HOST (testcontainers reads its environment once per process, hence one process per
// engine). Ryuk is off (TESTCONTAINERS_RYUK_DISABLED=true, set by the parent). Prints `{"seconds":…}` once
// all run, then waits for a line on stdin (the parent measures the engine while the N containers run)
// before it stops them.
import { once } from 'node:events';
import { GenericContainer, type StartedTestContainer } from 'testcontainers';

const IMAGE = 'localhost/berth/busybox:1';
const count = Number(process.env.BENCH_CONCURRENT ?? 50);

const t0 = performance.now();
const settled = await Promise.allSettled(Array.from({ length: count }, () => new GenericContainer(IMAGE).withCommand(['sleep', '600']).start()));
const seconds = (performance.now() - t0) / 1000;
const started = settled.filter((s): s is PromiseFulfilledResult<StartedTestContainer> => s.status === 'fulfilled').map((s) => s.value);
const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
if (!failed.length) {
  console.log(JSON.stringify({ seconds }));
  await once(process.stdin, 'data');
}
await Promise.allSettled(started.map((c) => c.stop({ timeout: 0 })));
if (failed.length) {
  process.stderr.write(`${failed.length} of ${count} starts failed, first: ${(failed[0].reason as Error).message}\n`);
  process.exit(1);
}
process.exit(0);
