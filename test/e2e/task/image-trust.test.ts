// Whether the nodes pull from the pods that serve images (berth task's --image-server), as their containerd is told
// to trust such hosts: the dev cluster's _default/hosts.toml (skip_verify) taken away, then a node that trusts only
// berth's image CA, which refuses a self-signed server and pulls from one whose certificate the CA issued
// (--image-server-ca). These change the node's registry trust for every client, so the file runs alone
// (harness/suites.ts, RUNS_ALONE).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, contextFor } from '../harness/cluster.js';
import { OTHER_HOSTS_DIR, withNodeTrustingOnly } from '../harness/node-trust.js';
import { BERTH_IMAGE } from '../incluster/recipes-env.js';
import { ROOTFS_PLAN } from './image-plans.js';
import { runCommand, setUpTask, tempTree, TASK_USER, type TaskEnv } from './task-env.js';

describe('berth task: what the nodes trust of the pods that serve step images', () => {
  let t: TaskEnv;
  const work = tempTree({});
  const plan = (args: string[]) =>
    runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', ...args, '--image', BUSYBOX], { env: t.env(), timeoutMs: 180_000 });
  const planFile = (name: string, text: string): string => {
    const file = join(work.dir, name);
    writeFileSync(file, text);
    return file;
  };
  before(async () => {
    t = await setUpTask('task-image-trust');
  });
  after(async () => {
    await t?.close();
    work.remove();
  });

  it('target check --image-server: a node pulls a served image; with the node told nothing of such hosts, the check says it cannot and why', async () => {
    const home = tempTree({});
    const env = { ...t.env({ XDG_CONFIG_HOME: home.dir }) };
    const berth = (args: string[]) => runCommand(process.execPath, [berthCli, 'task', 'target', ...args], { env, timeoutMs: 180_000 });
    const otherHosts = OTHER_HOSTS_DIR;
    try {
      const add = await berth(['add', 'probe', '--kubeconfig', String(env.KUBECONFIG), '--context', contextFor(TASK_USER), '-n', t.namespace]);
      assert.equal(add.code, 0, add.stderr);
      const yes = await berth(['check', 'probe', '--image-server', BERTH_IMAGE]);
      assert.equal(yes.code, 0, yes.stderr);
      assert.match(yes.stdout, new RegExp(`^step images served from pods of ${BERTH_IMAGE}: node \\S+ pulled one$`, 'm'));
      assert.match(yes.stdout, /^target probe is ready$/m);
      // containerd reads its hosts folder at each pull: without _default/hosts.toml it verifies the pod's certificate
      renameSync(otherHosts, `${otherHosts}.away`);
      const no = await berth(['check', 'probe', '--image-server', BERTH_IMAGE]);
      assert.equal(no.code, 1, no.stdout);
      assert.match(
        no.stderr,
        /berth task target check: the nodes cannot pull an image served from a pod: (ErrImagePull|ImagePullBackOff) for .*:5443\/berth\/probe@sha256:[0-9a-f]{64} .*skip_verify = true/,
      );
      assert.match(no.stdout, /^target probe is not ready$/m);
    } finally {
      if (existsSync(`${otherHosts}.away`)) renameSync(`${otherHosts}.away`, otherHosts);
      home.remove();
    }
    assert.deepEqual(await t.leftovers(), [], 'the probe pods are deleted');
  });

  it('nodes that trust only an image CA (berth image-ca): a self-signed server is refused by certificate, one whose certificate the CA issued (--image-server-ca) serves the step', async () => {
    const home = tempTree({});
    const env = { ...t.env({ XDG_CONFIG_HOME: home.dir }) };
    const berth = (args: string[]) => runCommand(process.execPath, [berthCli, ...args], { env, timeoutMs: 180_000 });
    const caDir = join(home.dir, 'image-ca');
    try {
      const made = await berth(['image-ca', caDir, '--ip-range', '10.244.0.0/16']);
      assert.equal(made.code, 0, made.stderr);
      await withNodeTrustingOnly(readFileSync(join(caDir, 'tls.crt'), 'utf8'), async () => {
        const add = await berth([
          'task',
          'target',
          'add',
          'trust',
          '--kubeconfig',
          String(env.KUBECONFIG),
          '--context',
          contextFor(TASK_USER),
          '-n',
          t.namespace,
        ]);
        assert.equal(add.code, 0, add.stderr);
        const selfSigned = await berth(['task', 'target', 'check', 'trust', '--image-server', BERTH_IMAGE]);
        assert.equal(selfSigned.code, 1, selfSigned.stdout);
        assert.match(selfSigned.stderr, /the nodes cannot pull an image served from a pod: (ErrImagePull|ImagePullBackOff) for .*(x509|certificate)/);
        const issued = await berth(['task', 'target', 'check', 'trust', '--image-server', BERTH_IMAGE, '--image-server-ca', caDir]);
        assert.equal(issued.code, 0, issued.stderr);
        assert.match(issued.stdout, new RegExp(`^step images served from pods of ${BERTH_IMAGE}: node \\S+ pulled one$`, 'm'));
        const r = await plan([planFile('rootfs-ca.yml', ROOTFS_PLAN), '--image-server', BERTH_IMAGE, '--image-server-ca', caDir]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'made in step one\nfrom the metadata\n');
      });
    } finally {
      home.remove();
    }
    assert.deepEqual(await t.leftovers(), [], 'the probe and image pods are deleted');
  });
});
