// Interruptions and permissions: SIGTERM in mid-run deletes everything before the shim exits; a
// SIGKILLed shim leaves objects that their deadline ends and `berth gc` removes once expired; a user
// without pods/attach hears so before any pod is created.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { berthCli, kubeConfig, kubectlOk, runCommand, waitForPod } from '../harness/cluster.js';
import { setUpShim, tempTree, type ShimEnv } from './shim-env.js';
import { CONFIGMAP_MOUNT_BYTES } from '../../../src/runtime/plan.js';

const SLEEP_INPUT =
  'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {seconds: "300"}\n';
const RUN_ARGV = ['run', '--rm', '-i', '--network', 'none', '--user', 'nobody', '--security-opt=no-new-privileges', 'localhost/berth/krm-sleep:1'];

let shim: ShimEnv;
let denied: ShimEnv;
let noDelete: ShimEnv;
const children = new Set<ChildProcess>();

before(async () => {
  shim = await setUpShim('shim-life');
  // The shipped Role without its pods/attach rule.
  // The shipped Role whose pods rule lacks delete: every run would leave its pod behind.
  noDelete = await setUpShim('shim-nodelete', {
    edit: (y) => y.replace('verbs: ["create", "get", "list", "watch", "delete"]', 'verbs: ["create", "get", "list", "watch"]'),
  });
  denied = await setUpShim('shim-noattach', {
    edit: (y) => y.replace(/\n {2}# WebSocket upgrades[^\n]*\n[^\n]*\n {2}- apiGroups: \[""\]\n {4}resources: \["pods\/attach"\]\n {4}verbs: \[[^\]]*\]/, ''),
  });
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await shim?.close();
  await denied?.close();
  await noDelete?.close();
});

/** Starts the shim on the sleep function and resolves once the function runs (its stderr says so). */
function startSleeping(
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; exit: Promise<{ code: number | null; signal: string | null; stderr: string }> }> {
  const child = spawn('docker', RUN_ARGV, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  const exit = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stderr });
    }),
  );
  child.stdin!.end(SLEEP_INPUT);
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('sleep: sleeping')) resolve({ child, exit });
    });
    void exit.then((e) => reject(new Error(`the shim ended before the function ran: ${e.code} ${e.stderr}`)));
  });
}

test('SIGTERM in mid-run: the pod and its NetworkPolicy are deleted before the shim exits 143', async () => {
  const { child, exit } = await startSleeping(shim.env('berth'));
  assert.equal((await shim.leftovers()).length, 2, 'a pod and a NetworkPolicy while running');
  child.kill('SIGTERM');
  const ended = await exit;
  assert.equal(ended.code, 143);
  assert.match(ended.stderr, /SIGTERM: the pod and its objects were deleted/);
  assert.deepEqual(await shim.leftovers(), []);
});

test('SIGKILL: the deadline ends the pod, berth gc removes the objects once expired, not before', async () => {
  // long enough that the gc runs before the deadline still find nothing expired on a busy machine
  const env = shim.env('berth', { BERTH_TTL: '8s' });
  const { child, exit } = await startSleeping(env);
  child.kill('SIGKILL');
  await exit;
  const left = await shim.leftovers();
  const pod = left.find((o) => o.startsWith('pod/'))?.slice(4);
  assert.ok(pod && left.some((o) => o.startsWith('networkpolicy')), `expected a pod and a NetworkPolicy, got ${left}`);

  // the shim's Role lists only what the shim creates
  const gc = (extra: string[] = []) => runCommand(process.execPath, [berthCli, 'gc', '--kinds', 'pods,configmaps,networkpolicies', ...extra], { env });
  const early = await gc();
  assert.equal(early.code, 0, early.stderr);
  assert.match(early.stdout, /nothing expired/);
  assert.deepEqual((await shim.leftovers()).sort(), left.sort());
  // without --kinds, the kinds the Role cannot list are named and the run is not a success
  const partial = await runCommand(process.execPath, [berthCli, 'gc', '--dry-run'], { env });
  assert.equal(partial.code, 1);
  assert.match(partial.stderr, /services, persistentvolumeclaims, leases\.coordination\.k8s\.io could not be listed/);
  // each named with the face that makes it and the Role that lists it, not the shim's Role for all
  assert.match(
    partial.stderr,
    /cannot list services in namespace \S+; they are made by berth serve \(network aliases\); deploy\/rbac\/serve-role\.yaml lists them/,
  );
  assert.doesNotMatch(partial.stdout, /^nothing expired$/m);

  // a kubelet reports the phase once the container has stopped: after the deadline, SIGTERM and the pod's grace
  // period (30 s by default; the function's sleep ignores SIGTERM as PID 1)
  const ended = await waitForPod(kubeConfig(), shim.namespace, pod, (p) => p.status?.phase === 'Failed', 75_000);
  assert.equal(ended.status?.reason, 'DeadlineExceeded');
  const dry = await gc(['--dry-run']);
  assert.match(dry.stdout, new RegExp(`Pod/${pod} \\(namespace ${shim.namespace}\\) would be deleted`));
  assert.equal((await shim.leftovers()).length, left.length);
  const late = await gc();
  assert.equal(late.code, 0, late.stderr);
  assert.match(late.stdout, new RegExp(`Pod/${pod} .* deleted`));
  assert.match(late.stdout, /NetworkPolicy\/.* deleted/);
  assert.deepEqual(await shim.leftovers(), []);
});

test('a user without pods/attach gets an error naming that permission before any pod exists', async () => {
  const r = await denied.run('berth', 'docker', RUN_ARGV, { input: SLEEP_INPUT });
  assert.equal(r.code, 125);
  assert.match(r.stderr, /forbidden: cannot create pods\/attach in namespace shim-noattach-\S+ .*deploy\/rbac\/shim-role\.yaml/);
  // asked before the pod: no pod was ever scheduled (how fast is the bench's business, not a test's)
  const scheduled = await kubectlOk(['get', 'events', '-n', denied.namespace, '--field-selector', 'reason=Scheduled', '-o', 'name']);
  assert.equal(scheduled.trim(), '', 'no pod was created for a user who may not attach');
  assert.deepEqual(await denied.leftovers(), []);
});

test('a user without delete on pods gets an error naming that rule, and no pod is created', async () => {
  const r = await noDelete.run('berth', 'docker', RUN_ARGV, { input: SLEEP_INPUT });
  assert.equal(r.code, 125);
  assert.match(r.stderr, /forbidden: cannot delete pods in namespace shim-nodelete-\S+ .*deploy\/rbac\/shim-role\.yaml/);
  assert.deepEqual(await noDelete.leftovers(), []);
});

test('a helper image the cluster cannot pull: the error names it and BERTH_HELPER_IMAGE, and nothing is left', async () => {
  // larger than a ConfigMap holds: the files go in through the helper image's init container
  const big = tempTree({ 'blob.bin': 'x'.repeat(CONFIGMAP_MOUNT_BYTES + 1) });
  try {
    const helper = 'localhost/berth/does-not-exist:1';
    const r = await shim.run(
      'berth',
      'docker',
      ['run', '--rm', '--network', 'none', '--mount', `type=bind,source=${big.dir},target=/data`, 'localhost/berth/busybox:1', 'ls', '/data'],
      {
        extraEnv: { BERTH_HELPER_IMAGE: helper },
        timeoutMs: 60_000,
      },
    );
    assert.equal(r.code, 125, r.stderr);
    assert.match(r.stderr, new RegExp(`the helper image ${helper.replace(/[./]/g, '\\$&')} copies mounted files into the pod: set BERTH_HELPER_IMAGE`));
    assert.deepEqual(await shim.leftovers(), []);
  } finally {
    big.remove();
  }
});
