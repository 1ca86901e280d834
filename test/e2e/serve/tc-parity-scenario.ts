// One testcontainers-node run for the client-parity items of issue 10, against the engine in DOCKER_HOST (a
// child process: testcontainers keeps its client, and its Ryuk, for the life of the process). Prints one JSON
// line of results; a step's failure is a result, not a crash, so every step reports.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenericContainer, ImageName, Network, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';

const BUSYBOX = 'localhost/berth/busybox:1';
/** Built by the test from BUSYBOX: its own CMD is a long sleep, and nobody names a command for it. */
const SLEEPY = process.env.TC_SLEEPY_IMAGE ?? '';
const results: Record<string, unknown> = {};

async function step(name: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    results[name] = { ok: true, value: await fn() };
  } catch (err) {
    results[name] = { ok: false, error: (err as Error).message.slice(0, 600) };
  }
}

const client = await getContainerRuntimeClient();
const docker = client.container.dockerode;

/** Ids of the running containers labelled as testcontainers' reaper. */
async function reapers(): Promise<string[]> {
  const list = await docker.listContainers({ filters: { label: ['org.testcontainers.ryuk=true'] } });
  return list.map((c) => c.Id);
}

await step('reaper', async () => {
  if (process.env.TESTCONTAINERS_RYUK_DISABLED === 'true') return 'disabled';
  const c = await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).start();
  await c.stop();
  return reapers();
});

await step('generatedNames', async () => {
  await client.image.pull(ImageName.fromString(BUSYBOX), { force: false, platform: undefined });
  const names: string[] = [];
  for (let i = 0; i < 16; i++) {
    const created = await docker.createContainer({ Image: BUSYBOX, Cmd: ['true'], Labels: { 'berth.test': 'names' } });
    names.push((await created.inspect()).Name);
    await created.remove({ force: true });
  }
  return names;
});

await step('logConfig', async () => {
  const c = await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).withDefaultLogDriver().start();
  try {
    return (await docker.getContainer(c.getId()).inspect()).HostConfig.LogConfig;
  } finally {
    await c.stop();
  }
});

await step('pullEvents', async () => {
  // `since` has whole seconds: the earlier steps' pulls of that second are left out by each event's timeNano.
  const startedNs = Date.now() * 1e6;
  const since = Math.floor(Date.now() / 1000) - 1;
  const image = ImageName.fromString(BUSYBOX);
  await client.image.pull(image, { force: true, platform: undefined });
  await client.image.pull(image, { force: true, platform: undefined });
  const until = Math.floor(Date.now() / 1000) + 1;
  const stream = (await docker.getEvents({ since, until, filters: { type: ['image'], event: ['pull'] } })) as unknown as AsyncIterable<Buffer>;
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text
    .split('\n')
    .filter(Boolean)
    .filter((line) => (JSON.parse(line) as { timeNano: number }).timeNano >= startedNs).length;
});

await step('laterAliasResolves', async () => {
  const network = await new Network().start();
  const started: StartedTestContainer[] = [];
  try {
    started.push(await new GenericContainer(BUSYBOX).withNetwork(network).withNetworkAliases('early').withCommand(['sleep', '600']).start());
    started.push(
      await new GenericContainer(BUSYBOX)
        .withNetwork(network)
        .withNetworkAliases('later', 'later2')
        .withCommand(['sh', '-c', 'echo from-later > /tmp/i; exec httpd -f -p 8080 -h /tmp'])
        .start(),
    );
    // A third member afterwards changes the network's Services (the dev cluster rewrites its pods' /etc/hosts
    // then): the earlier member still resolves both aliases of the later one.
    started.push(await new GenericContainer(BUSYBOX).withNetwork(network).withNetworkAliases('third').withCommand(['sleep', '600']).start());
    // TC_ALIAS_TRIES: podman's DNS learns a new member a moment after its start; berth's start answers after
    // the earlier members can resolve it (one try). No `wget -T`: this busybox build crashes with it.
    const tries = Number(process.env.TC_ALIAS_TRIES ?? '1');
    const fetch = (alias: string): string =>
      `i=0; while [ $i -lt ${tries} ]; do wget -q -O - http://${alias}:8080/i && break; i=$((i+1)); sleep 0.3; done; [ $i -lt ${tries} ]`;
    const r = await started[0].exec(['sh', '-c', `${fetch('later')} && ${fetch('later2')}`]);
    return { exitCode: r.exitCode, output: r.output };
  } finally {
    for (const c of started.reverse()) await c.stop();
    await network.stop();
  }
});

await step('logFrames', async () => {
  // One write of three lines: dockerd's (and podman's) logs give a frame per line, which testcontainers'
  // log consumers (and its own log tracing) see as one `data` event per line.
  const c = await new GenericContainer(BUSYBOX)
    .withCommand(['sh', '-c', "printf 'one\\ntwo\\nthree\\n'; exec sleep 600"])
    .withWaitStrategy(Wait.forLogMessage('three'))
    .start();
  try {
    const raw = (await docker.getContainer(c.getId()).logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    const frames: string[] = [];
    for (let i = 0; i + 8 <= raw.length; i += 8 + raw.readUInt32BE(i + 4)) frames.push(raw.subarray(i + 8, i + 8 + raw.readUInt32BE(i + 4)).toString());
    return frames;
  } finally {
    await c.stop();
  }
});

await step('execOtherUser', async () => {
  const c = await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).start();
  try {
    const r = await c.exec(['whoami'], { user: 'nobody' });
    return { ran: true, output: r.output };
  } catch (err) {
    return { ran: false, error: (err as Error).message.slice(0, 400) };
  } finally {
    await c.stop();
  }
});

await step('build', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tc-build-'));
  const started = Date.now();
  try {
    writeFileSync(join(dir, 'Dockerfile'), `FROM ${BUSYBOX}\nRUN true\n`);
    const built = await GenericContainer.fromDockerfile(dir).build(`localhost/tc-parity-built:${process.pid}`, { deleteOnExit: false });
    void built;
    await docker.getImage(`localhost/tc-parity-built:${process.pid}`).remove();
    return { built: true, ms: Date.now() - started };
  } catch (err) {
    return { built: false, error: (err as Error).message.slice(0, 400), ms: Date.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

await step('copyBeforeStartAnyImage', async () => {
  const c = await new GenericContainer(SLEEPY).withCopyContentToContainer([{ content: 'copied\n', target: '/bin/berth-hello.txt' }]).start();
  try {
    const r = await c.exec(['cat', '/bin/berth-hello.txt']);
    return { exitCode: r.exitCode, output: r.output };
  } finally {
    await c.stop();
  }
});

await step('udpBinding', async () => {
  try {
    const c = await new GenericContainer(BUSYBOX).withCommand(['sleep', '600']).withExposedPorts('53/udp').start();
    await c.stop();
    return { started: true };
  } catch (err) {
    return { started: false, error: (err as Error).message.slice(0, 400) };
  }
});

console.log(JSON.stringify(results));
