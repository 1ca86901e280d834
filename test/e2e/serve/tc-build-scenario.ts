// One testcontainers-node run of GenericContainer.fromDockerfile against the engine in DOCKER_HOST (a child process,
// as tc-parity-scenario.ts): the fixture context with build args, a target stage and its .dockerignore, the image
// started and its output read; then a Dockerfile that fails; then a changed container committed (with a change) and
// the committed image started. Prints one JSON line of results.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenericContainer } from 'testcontainers';

const context = process.env.TC_BUILD_CONTEXT ?? '';
/** The base the builder reaches (berth: the dev cluster's registry); empty: the Dockerfile's own default. */
const base = process.env.TC_BUILD_BASE ?? '';
/** Named by the test, which removes it whatever this run does. */
const image = process.env.TC_BUILD_IMAGE ?? '';
/** The commit's repository (tag 1), named by the test too. */
const committed = process.env.TC_COMMIT_REPO ?? '';
const busybox = process.env.TC_BUSYBOX ?? '';
const results: Record<string, unknown> = {};

async function step(name: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    results[name] = { ok: true, value: await fn() };
  } catch (err) {
    results[name] = { ok: false, error: (err as Error).message.slice(0, 800) };
  }
}

await step('fromDockerfile', async () => {
  const container = await GenericContainer.fromDockerfile(context)
    .withBuildArgs({ GREETING: 'testcontainers', ...(base ? { BASE: base } : {}) })
    .withTarget('final')
    .build(image, { deleteOnExit: false });
  // the image's own command ran in the docker CLI test; here its files and env are read through exec
  const started = await container.withCommand(['sleep', '600']).start();
  // stopped whatever the exec does: Ryuk is off, so nothing else removes it
  try {
    const r = await started.exec(['sh', '-c', 'cat /greeting.txt /ctx/kept.txt; ls /ctx; echo "BUILT=$BUILT"; cat /other.txt 2>/dev/null || true']);
    return r.output;
  } finally {
    await started.stop();
  }
});

await step('failingBuild', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tc-build-fail-'));
  try {
    cpSync(context, dir, { recursive: true });
    writeFileSync(join(dir, 'Dockerfile'), `ARG BASE=localhost/berth/busybox:1\nFROM \${BASE}\nRUN echo about to fail; exit 3\n`);
    await GenericContainer.fromDockerfile(dir)
      .withBuildArgs(base ? { BASE: base } : {})
      .build(`localhost/tc-build-fails:${process.pid}`, { deleteOnExit: false });
    return { built: true };
  } catch (err) {
    return { built: false, error: (err as Error).message.slice(0, 800) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

await step('commit', async () => {
  const changed = await new GenericContainer(busybox).withCommand(['sh', '-c', 'echo committed > /made; exec sleep 600']).start();
  try {
    await changed.exec(['sh', '-c', 'until [ -e /made ]; do sleep 0.1; done']);
    await changed.commit({ repo: committed, tag: '1', changes: ['ENV FROM_COMMIT=yes'], deleteOnExit: false });
  } finally {
    await changed.stop();
  }
  const again = await new GenericContainer(`${committed}:1`).withCommand(['sleep', '600']).start();
  try {
    return (await again.exec(['sh', '-c', 'cat /made; echo "FROM_COMMIT=$FROM_COMMIT"'])).output;
  } finally {
    await again.stop();
  }
});

console.log(JSON.stringify(results));
