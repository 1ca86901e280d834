// Replaces the build's dist/src/kube/client-node.js (a re-export of @kubernetes/client-node) with a bundle of
// what it exports: one module instead of the package's 826, tree-shaken to the APIs berth uses. The package's
// own dependencies stay imports (they are few, and ws must stay the one berth uses too). Without esbuild the
// re-export stays as it is: berth works the same, it only starts slower.
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/src/kube/client-node.js');
if (!existsSync(out)) {
  console.error(`bundle-client-node: ${out} is missing: run tsc first`);
  process.exit(1);
}
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('bundle-client-node: esbuild is not installed; @kubernetes/client-node is loaded module by module');
  process.exit(0);
}
await esbuild.build({
  entryPoints: [out],
  outfile: out,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  packages: 'external',
  // the package itself is bundled, its dependencies are not
  plugins: [
    {
      name: 'bundle-client-node',
      setup(build) {
        build.onResolve({ filter: /^@kubernetes\/client-node$/ }, () => ({ path: join(root, 'node_modules/@kubernetes/client-node/dist/index.js') }));
      },
    },
  ],
  logLevel: 'warning',
});
// tsc's map describes the re-export, not the bundle
rmSync(`${out}.map`, { force: true });
