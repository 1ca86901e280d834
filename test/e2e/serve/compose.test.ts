// docker compose v2 (the plugin, with the docker CLI 29, both built from their Go modules by scripts/clients/docker.sh)
// against podman's service and berth serve: up -d, ps, logs, exec, run --rm and down -v of test/clients/compose's
// three services, then testcontainers-node's DockerComposeEnvironment over the same file.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot, runCommand } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { ENGINES, suiteEnv, useEngine, type EngineKind } from './client-suite.js';
import { type Cli29Engine, withCli29 } from './docker29.js';
import type { DockerEngine } from './serve-env.js';

const folder = join(repoRoot, 'test/clients/compose');
const scenario = join(repoRoot, 'dist/test/e2e/serve/tc-compose-scenario.js');

/**
 * podman 4.3's service runs no health checks without systemd (their timers are systemd's): compose would wait for
 * store's health forever. On podman the test plays the timer, `podman healthcheck run` each second on the project's
 * containers still starting, so the compose file is the same on both engines. berth runs the checks itself.
 */
function playHealthTimer(kind: EngineKind, project: string): () => void {
  if (kind !== 'podman') return () => undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const ps = await runCommand('podman', ['ps', '-q', '--filter', `label=com.docker.compose.project=${project}`, '--filter', 'health=starting']);
      for (const id of ps.stdout.split('\n').filter(Boolean)) await runCommand('podman', ['healthcheck', 'run', id]);
    })().finally(() => (busy = false));
  }, 1000);
  return () => clearInterval(timer);
}

/** What carries the project's label, of each kind compose makes: nothing once down -v has run. */
async function projectObjects(cli: DockerEngine, project: string): Promise<string[]> {
  const filter = ['--filter', `label=com.docker.compose.project=${project}`];
  const lists = await Promise.all([
    cli.dockerOk(['ps', '-a', '--format', 'container {{.Names}}', ...filter]),
    cli.dockerOk(['network', 'ls', '--format', 'network {{.Name}}', ...filter]),
    cli.dockerOk(['volume', 'ls', '--format', 'volume {{.Name}}', ...filter]),
  ]);
  return lists.flatMap((l) => l.split('\n').filter(Boolean));
}

for (const kind of ENGINES) {
  describe(`docker compose against ${kind}`, () => {
    // made once the engine runs (useEngine's before comes first)
    let cli29: Cli29Engine | undefined;
    const cli = (): Cli29Engine => cli29 ?? assert.fail('the engine did not start');
    const projects: string[] = [];
    // a test that failed half-way leaves its project up: down -v, as a user would
    const { engine, suite } = useEngine(kind, 'compose', {
      beforeStop: async () => {
        for (const p of projects) await cli29?.docker(['compose', '--project-directory', folder, '-p', p, 'down', '-v', '-t', '0'], { timeoutMs: 120_000 });
      },
    });
    const project = suite;
    projects.push(project, `${suite}-tc`);
    before(() => (cli29 = withCli29(engine())));
    const compose = (args: string[], timeoutMs = 120_000): Promise<string> =>
      cli().dockerOk(['compose', '--project-directory', folder, '-p', project, ...args], { timeoutMs });

    test('up -d: web starts once store is healthy, reaches it by its alias, and answers on the published loopback port', async () => {
      console.log(`docker compose against ${kind}: ${(await compose(['version'])).trim()}`);
      const stop = playHealthTimer(kind, project);
      try {
        await compose(['up', '-d'], 240_000);
      } finally {
        stop();
      }
      const started = async (service: string): Promise<number> =>
        Date.parse((await cli().dockerOk(['inspect', '-f', '{{.State.StartedAt}}', `${project}-${service}-1`])).trim());
      // store turns healthy 3 s after it starts; web would exit 1 had it started before (compose.yaml)
      assert.ok((await started('web')) - (await started('store')) >= 3000, 'web started at least 3 s after store');
      const [host, port] = (await compose(['port', 'web', '8080'])).trim().split(':');
      assert.equal(host, '127.0.0.1');
      const page = await eventually('the published port answers', async () => (await fetch(`http://127.0.0.1:${port}/`)).text(), { timeoutMs: 20_000 });
      assert.equal(page, 'web sees store: stored\n');
    });

    test('ps: the three services running, store healthy, web published', async () => {
      const rows = (await compose(['ps', '--format', 'json']))
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { Service: string; State: string; Health: string; Publishers: Array<{ URL: string; TargetPort: number; PublishedPort: number }> },
        );
      assert.deepEqual(rows.map((r) => `${r.Service} ${r.State}`).sort(), ['store running', 'web running', 'worker running']);
      const byService = Object.fromEntries(rows.map((r) => [r.Service, r]));
      assert.equal(byService.store.Health, 'healthy');
      const published = byService.web.Publishers.filter((p) => p.PublishedPort > 0);
      assert.deepEqual(
        published.map((p) => [p.URL, p.TargetPort]),
        [['127.0.0.1', 8080]],
      );
    });

    test('logs: each service its lines; worker read both writers on the volume and reached web by its name', async () => {
      const logs = await eventually('the worker is done', async () => {
        const out = await compose(['logs', '--no-color']);
        return out.includes('worker asked web') && out;
      });
      const lines = logs.split('\n');
      const of = (service: string): string[] => lines.filter((l) => l.startsWith(`${service}-1 `)).map((l) => l.replace(/^\S+\s+\|\s/, ''));
      assert.deepEqual(of('store'), ['store serving', 'store healthy']);
      assert.deepEqual(of('web'), ['web serving what db said: stored']);
      assert.deepEqual(of('worker'), ['worker read: stored-by-store from-web', 'worker asked web: web sees store: stored']);
    });

    test('exec: the alias from web, the volume from worker, the exit code', async () => {
      assert.equal(await compose(['exec', '-T', 'web', 'wget', '-qO-', 'http://db:8080/']), 'stored\n');
      assert.equal(await compose(['exec', '-T', 'worker', 'cat', '/shared/from-store', '/shared/from-web']), 'stored-by-store\nfrom-web\n');
      const r = await cli().docker([
        'compose',
        '--project-directory',
        folder,
        '-p',
        project,
        'exec',
        '-T',
        'store',
        'sh',
        '-c',
        'echo out; echo err >&2; exit 3',
      ]);
      assert.deepEqual([r.code, r.stdout, r.stderr], [3, 'out\n', 'err\n']);
    });

    test('run --rm: a one-off worker on the network and the volume, removed after', async () => {
      const out = await compose(['run', '--rm', '-T', '--no-deps', 'worker', 'sh', '-c', 'cat /shared/from-web; wget -qO- http://db:8080/']);
      assert.equal(out, 'from-web\nstored\n');
      const oneOffs = await cli().dockerOk([
        'ps',
        '-aq',
        '--filter',
        `label=com.docker.compose.project=${project}`,
        '--filter',
        'label=com.docker.compose.oneoff=True',
      ]);
      assert.equal(oneOffs.trim(), '');
    });

    test('down -v: nothing labelled with the project is left', async () => {
      await compose(['down', '-v']);
      assert.deepEqual(await projectObjects(cli(), project), []);
    });

    test("testcontainers-node's DockerComposeEnvironment: up with wait strategies, exec, down", async () => {
      const tcProject = `${suite}-tc`;
      const stop = playHealthTimer(kind, tcProject);
      const r = await runCommand(process.execPath, [scenario, folder, tcProject], {
        env: { ...suiteEnv(kind, engine().socket, suite), PATH: cli().env.PATH, DOCKER_CONFIG: cli().env.DOCKER_CONFIG },
        timeoutMs: 300_000,
      }).finally(stop);
      assert.equal(r.code, 0, `the scenario exited ${r.code}\n${r.stdout}\n${r.stderr}`);
      assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').at(-1)!), {
        page: 'web sees store: stored\n',
        shared: 'stored-by-store\nfrom-web\n',
        byAlias: 'stored\n',
      });
      assert.deepEqual(await projectObjects(cli(), tcProject), []);
    });
  });
}
