// testcontainers-node's DockerComposeEnvironment over test/clients/compose/compose.yaml, against the engine in
// DOCKER_HOST, in a child process of compose.test.ts (testcontainers keeps its client for the life of the process).
// It runs `docker compose` from PATH, which the parent has made the CLI 29 with its plugin. Prints one JSON line.
//   node tc-compose-scenario.js <folder of compose.yaml> <project name>
import { DockerComposeEnvironment, Wait } from 'testcontainers';

const [folder, project] = process.argv.slice(2);
if (!folder || !project) throw new Error('usage: tc-compose-scenario.js <folder of compose.yaml> <project name>');

const env = await new DockerComposeEnvironment(folder, 'compose.yaml')
  .withProjectName(project)
  .withWaitStrategy('web-1', Wait.forHttp('/', 8080))
  .withWaitStrategy('worker-1', Wait.forLogMessage('worker asked web'))
  .withStartupTimeout(120_000)
  .up();
let result: Record<string, unknown>;
try {
  const web = env.getContainer('web-1');
  const page = await (await fetch(`http://${web.getHost()}:${web.getMappedPort(8080)}/`)).text();
  const shared = await env.getContainer('worker-1').exec(['cat', '/shared/from-store', '/shared/from-web']);
  const byAlias = await env.getContainer('web-1').exec(['wget', '-qO-', 'http://db:8080/']);
  result = { page, shared: shared.output, byAlias: byAlias.output };
} finally {
  await env.down({ removeVolumes: true, timeout: 1000 });
}
console.log(JSON.stringify(result));
