#!/usr/bin/env node
// berth's command line: one entry point, a subcommand per face. Invoked as `docker` (through the link that
// `berth shim install` makes) it is the docker shim, with docker's own argv.
import module from 'node:module';
import { basename } from 'node:path';

// kustomize and kpt start one `docker` process per function: a compile cache saves each of them a good part of
// loading @kubernetes/client-node.
module.enableCompileCache?.();

// Each face is imported only when it runs, so the shim does not pay for the dev cluster and the other faces.
if (basename(process.argv[1] ?? '') === 'docker') {
  await (await import('./docker-entry.js')).runAsDocker(process.argv.slice(2));
} else if (process.argv[2] === 'docker') {
  await (await import('./docker-entry.js')).runAsDocker(process.argv.slice(3));
} else {
  const face = process.argv[2];
  // berth serve, a long-lived server: its heap is sized for streaming before anything is loaded (server-heap.ts)
  if (face === 'serve') (await import('./server-heap.js')).useServerHeap();
  const { Command } = await import('commander');
  const { BERTH_VERSION } = await import('./version.js');
  const program = new Command('berth').description('run container workloads as native Kubernetes pods').version(BERTH_VERSION).showHelpAfterError();
  const faces: Record<string, () => Promise<InstanceType<typeof Command>>> = {
    docker: async () => (await import('./docker.js')).dockerCommand(),
    shim: async () => (await import('./docker.js')).shimCommand(),
    gc: async () => (await import('./gc.js')).gcCommand(),
    'dev-cluster': async () => (await import('./dev-cluster.js')).devClusterCommand(),
    catalog: async () => (await import('./catalog.js')).catalogCommand(),
    fn: async () => (await import('./fn.js')).fnCommand(),
    serve: async () => (await import('./serve.js')).serveCommand(),
    task: async () => (await import('./task.js')).taskCommand(),
    'image-serve': async () => (await import('./image-serve.js')).imageServeCommand(),
    'image-ca': async () => (await import('./image-ca.js')).imageCaCommand(),
  };
  // `berth FACE ...` loads that face alone (a CI step or a function call pays for nothing else); anything else, all.
  for (const name of face && Object.hasOwn(faces, face) ? [face] : Object.keys(faces)) program.addCommand(await faces[name]());
  program.parseAsync(process.argv).catch((err: Error) => {
    process.stderr.write(`berth: ${err.message}\n`);
    process.exit(1);
  });
}
