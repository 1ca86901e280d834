// The pods of every face that feeds files into a pod, byte for byte as they were planned before the faces shared
// one file feed (feed-pods-golden.ts, written by `node dist/test/unit/runtime/feed-pods.test.js --write`
// once, from the planners of main before the change). A difference here is a pod that changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { feedPods } from './feed-pods.js';
import { FEED_PODS } from './feed-pods-golden.js';

if (process.argv.includes('--write')) {
  const pods = await feedPods();
  const text = `// Written by feed-pods.test.ts --write: the planned pods it pins.\nimport type { V1Pod } from '@kubernetes/client-node';\n\nexport const FEED_PODS: Record<string, V1Pod> = ${JSON.stringify(pods, null, 2)};\n`;
  await writeFile(new URL('../../../../test/unit/runtime/feed-pods-golden.ts', import.meta.url), text);
}

test('every face plans the pods it planned before, byte for byte', async () => {
  const pods = await feedPods();
  assert.deepEqual(Object.keys(pods), Object.keys(FEED_PODS));
  for (const [name, pod] of Object.entries(pods)) assert.equal(JSON.stringify(pod, null, 1), JSON.stringify(FEED_PODS[name], null, 1), name);
});
