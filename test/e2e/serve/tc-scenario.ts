// One testcontainers-node run against the engine in DOCKER_HOST (a child process per engine and per Ryuk
// setting: testcontainers keeps its client for the life of the process). Prints one JSON line of results.
import { GenericContainer, Network, Wait } from 'testcontainers';

const BUSYBOX = 'localhost/berth/busybox:1';
const results: Record<string, unknown> = {};

async function step(name: string, fn: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  try {
    results[name] = { ok: true, value: await fn(), ms: Date.now() - started };
  } catch (err) {
    results[name] = { ok: false, error: (err as Error).message.slice(0, 500), ms: Date.now() - started };
  }
}

const skipHealth = process.env.TC_SKIP_HEALTH === '1';

await step('exposedPortsDefaultWait', async () => {
  const c = await new GenericContainer(BUSYBOX)
    .withCommand(['sh', '-c', 'echo served > /tmp/index.html; exec httpd -f -p 8080 -h /tmp'])
    .withExposedPorts(8080)
    .start();
  try {
    return await (await fetch(`http://${c.getHost()}:${c.getMappedPort(8080)}/index.html`)).text();
  } finally {
    await c.stop();
  }
});

await step('logMessageWait', async () => {
  const c = await new GenericContainer(BUSYBOX)
    .withCommand(['sh', '-c', 'sleep 0.5; echo all ready; exec sleep 600'])
    .withWaitStrategy(Wait.forLogMessage('all ready'))
    .start();
  await c.stop();
  return 'started';
});

if (!skipHealth) {
  await step('healthcheckWait', async () => {
    const c = await new GenericContainer(BUSYBOX)
      .withCommand(['sh', '-c', 'sleep 1; touch /tmp/ok; exec sleep 600'])
      .withHealthCheck({ test: ['CMD-SHELL', 'test -e /tmp/ok'], interval: 300, timeout: 2000, retries: 20, startPeriod: 0 })
      .withWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(30_000)
      .start();
    const ok = (await c.exec(['test', '-e', '/tmp/ok'])).exitCode;
    await c.stop();
    return ok;
  });
}

await step('execCopyRestartStop', async () => {
  const c = await new GenericContainer(BUSYBOX)
    // The file is read at once (it must be there when the process starts) and printed a second later:
    // the log wait asks for lines since its own start time, and a line printed before that (a busy
    // machine) is filtered out by podman, the reference.
    .withCommand(['sh', '-c', 'x=$(cat /data/x.txt); sleep 1; echo "$x"; exec sleep 600'])
    .withCopyContentToContainer([{ content: 'copied before start\n', target: '/data/x.txt' }])
    .withWaitStrategy(Wait.forLogMessage('copied before start'))
    .start();
  const exec = await c.exec(['sh', '-c', 'echo out; echo err >&2; exit 3']);
  await c.restart();
  const afterRestart = await c.exec(['cat', '/data/x.txt']);
  await c.stop();
  return { exitCode: exec.exitCode, stdout: exec.stdout, stderr: exec.stderr, afterRestart: afterRestart.exitCode };
});

await step('networkAliases', async () => {
  const network = await new Network().start();
  try {
    const c = await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).withNetwork(network).withNetworkAliases('tcalias').start();
    await c.stop();
    return 'started';
  } finally {
    await network.stop();
  }
});

if (process.env.TC_LEAVE_ONE === '1') {
  // Left running on purpose: the reaper must remove it once this process is gone.
  await step('leftRunning', async () => (await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).start()).getId());
}

process.stdout.write(`${JSON.stringify(results)}\n`);
process.exit(0);
