// The docker CLI 29 and its compose plugin, built from their Go modules by scripts/clients/docker.sh (the installed CLI
// is 28, which asks for older API versions): an engine of serve-env.ts driven by that CLI instead.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { runCommand, type Result } from '../harness/cluster.js';
import { clientTool } from './client-suite.js';
import type { DockerEngine } from './serve-env.js';

/** The engine driven by the CLI 29, and the environment that CLI (and `docker compose` through it) runs in. */
export interface Cli29Engine extends DockerEngine {
  env: NodeJS.ProcessEnv;
}

let folder: string | undefined;

/** The folder scripts/clients/docker.sh prints (it builds once, then answers from its cache). */
export function cli29Folder(): string {
  folder ??= clientTool('docker');
  return folder;
}

/**
 * `engine` with docker() and dockerOk() running the CLI 29. Its config folder is the engine's own (serve-env.ts gives
 * the installed CLI the same, and removes it at stop): there config.json names the compose plugin's folder, which the
 * CLI searches before its default plugin folders. The CLI's folder is first on PATH, so a tool that runs `docker
 * compose` from PATH (testcontainers-node's DockerComposeEnvironment) gets this CLI and plugin too.
 */
export function withCli29(engine: DockerEngine): Cli29Engine {
  const bin = cli29Folder();
  const config = dirname(engine.socket);
  writeFileSync(join(config, 'config.json'), JSON.stringify({ cliPluginsExtraDirs: [join(bin, 'cli-plugins')] }));
  const env = { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_CONFIG: config, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
  const docker = (args: string[], opts: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<Result> =>
    runCommand(join(bin, 'docker'), args, { input: opts.input, timeoutMs: opts.timeoutMs ?? 90_000, env });
  return {
    ...engine,
    env,
    docker,
    async dockerOk(args, opts) {
      const r = await docker(args, opts);
      assert.equal(r.code, 0, `docker ${args.join(' ')} (CLI 29) exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    },
  };
}
