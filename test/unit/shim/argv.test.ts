import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDockerArgv, DockerUsageError, dockerMemoryToQuantity, dockerCpusToQuantity, type RunCommand } from '../../../src/shim/argv.js';

const run = (argv: string[], env: NodeJS.ProcessEnv = {}): RunCommand => {
  const c = parseDockerArgv(argv, env, '/work/site');
  assert.equal(c.kind, 'run');
  return c as RunCommand;
};

test('kustomize argv (worked example) becomes the expected workload', () => {
  const c = run(
    (
      'run --rm -i -a STDIN -a STDOUT -a STDERR --network host --user nobody --security-opt=no-new-privileges ' +
      '--mount type=bind,source=/home/dev/site/schemas,target=/schemas,readonly -e DEBUG=1 -e LOG_TO_STDERR=true ' +
      '-e REGION=eu -e STRUCTURED_RESULTS=true -e GITHUB_TOKEN ghcr.io/acme/validate:v2'
    ).split(' '),
    { GITHUB_TOKEN: 't0k' },
  );
  assert.equal(c.remove, true);
  assert.deepEqual(c.attach, { stdin: true, stdout: true, stderr: true });
  assert.equal(c.workload.image, 'ghcr.io/acme/validate:v2');
  assert.equal(c.workload.stdin, true);
  assert.equal(c.workload.network, 'host');
  assert.deepEqual(c.workload.user, { uid: 65534 });
  assert.equal(c.workload.noNewPrivileges, true);
  assert.deepEqual(c.workload.mounts, [{ source: '/home/dev/site/schemas', target: '/schemas', readOnly: true }]);
  assert.deepEqual(c.workload.env, [
    { name: 'DEBUG', value: '1' },
    { name: 'LOG_TO_STDERR', value: 'true' },
    { name: 'REGION', value: 'eu' },
    { name: 'STRUCTURED_RESULTS', value: 'true' },
    { name: 'GITHUB_TOKEN', value: 't0k' },
  ]);
  assert.equal(c.workload.args, undefined);
});

test('-e KEY is dropped when unset in the environment, kept when set to empty', () => {
  assert.equal(run(['run', '-e', 'MISSING', 'img']).workload.env, undefined);
  assert.deepEqual(run(['run', '-e', 'EMPTY', 'img'], { EMPTY: '' }).workload.env, [{ name: 'EMPTY', value: '' }]);
});

test('kpt argv: --pull, relative mount source, uid:gid user', () => {
  const c = run(
    'run --rm -i --network none --user 1000:2000 --security-opt=no-new-privileges --pull never --mount type=bind,src=data,dst=/data img:1'.split(' '),
  );
  assert.equal(c.workload.pullPolicy, 'Never');
  assert.equal(c.workload.network, 'none');
  assert.deepEqual(c.workload.user, { uid: 1000, gid: 2000 });
  assert.deepEqual(c.workload.mounts, [{ source: '/work/site/data', target: '/data', readOnly: false }]);
  assert.deepEqual(c.attach, { stdin: true, stdout: true, stderr: true });
});

test('combined short flags, --flag=value, -eK=V, and everything after IMAGE belongs to the container', () => {
  const c = run(['run', '-it', '--name=fn1', '-eA=1', '-w', '/src', '--entrypoint', 'sh', 'busybox', '-c', 'echo --rm']);
  assert.equal(c.workload.tty, true);
  assert.equal(c.workload.stdin, true);
  assert.equal(c.workload.name, 'fn1');
  assert.deepEqual(c.workload.env, [{ name: 'A', value: '1' }]);
  assert.equal(c.workload.workingDir, '/src');
  assert.deepEqual(c.workload.command, ['sh']);
  assert.deepEqual(c.workload.args, ['-c', 'echo --rm']);
  assert.equal(c.remove, false);
});

test('-a without STDOUT detaches stdout; -v host:ctr:ro; labels, memory, cpus', () => {
  const c = run(['run', '-a', 'stderr', '-v', '/tmp/x:/x:ro', '--label', 'team=web', '-l', 'flag', '--memory', '512m', '--cpus', '1.5', 'img']);
  assert.deepEqual(c.attach, { stdin: false, stdout: false, stderr: true });
  assert.deepEqual(c.workload.mounts, [{ source: '/tmp/x', target: '/x', readOnly: true }]);
  assert.deepEqual(c.workload.labels, { team: 'web', flag: '' });
  assert.deepEqual(c.workload.resources, { memory: '512Mi', cpus: '1500m' });
});

test('unknown flags and unsupported values fail with docker-style messages and exit 125', () => {
  const cases: Array<[string[], RegExp]> = [
    [['run', '--foo', 'img'], /^unknown flag: --foo$/],
    [['run', '-x', 'img'], /^unknown shorthand flag: 'x' in -x$/],
    [['run', '--user', 'alice', 'img'], /cannot map user name "alice"/],
    [['run', '--pull', 'sometimes', 'img'], /invalid pull option/],
    [['run', '--mount', 'type=volume,src=v,dst=/v', 'img'], /type=volume is not supported/],
    [['run', '-v', 'named:/data', 'img'], /named volumes are not supported/],
    [['run', '--security-opt', 'seccomp=unconfined', 'img'], /only no-new-privileges/],
    [['run', '--rm'], /requires at least 1 argument/],
    [['run', '--network'], /flag needs an argument: --network/],
    [['run', '-d', 'img'], /--detach is not supported/],
    [['frobnicate'], /unknown command/],
  ];
  for (const [argv, re] of cases) {
    assert.throws(
      () => parseDockerArgv(argv, {}, '/'),
      (e: unknown) => e instanceof DockerUsageError && e.exitCode === 125 && re.test(e.message),
      argv.join(' '),
    );
  }
});

test('preflight sub-commands', () => {
  assert.deepEqual(parseDockerArgv(['version', '--format', '{{.Client.Version}}'], {}, '/'), { kind: 'version', format: '{{.Client.Version}}' });
  assert.deepEqual(parseDockerArgv(['version'], {}, '/'), { kind: 'version', format: undefined });
  assert.deepEqual(parseDockerArgv(['image', 'inspect', 'a:1'], {}, '/'), { kind: 'image-inspect', images: ['a:1'], format: undefined });
  assert.deepEqual(parseDockerArgv(['image', 'pull', 'a:1'], {}, '/'), { kind: 'image-pull', image: 'a:1', quiet: false });
  assert.deepEqual(parseDockerArgv(['image', 'ls', '--filter', 'reference=a', '--format', '{{ .Tag }}'], {}, '/'), {
    kind: 'image-ls',
    filters: ['reference=a'],
    format: '{{ .Tag }}',
    quiet: false,
  });
  assert.deepEqual(parseDockerArgv(['info'], {}, '/'), { kind: 'info', format: undefined });
});

test('docker units convert to Kubernetes quantities', () => {
  assert.equal(dockerMemoryToQuantity('1g'), '1Gi');
  assert.equal(dockerMemoryToQuantity('1048576'), '1048576');
  assert.equal(dockerMemoryToQuantity('1.5g'), String(1.5 * 1024 ** 3));
  assert.equal(dockerCpusToQuantity('2'), '2');
  assert.equal(dockerCpusToQuantity('0.25'), '250m');
  assert.throws(() => dockerCpusToQuantity('-1'));
  assert.throws(() => dockerMemoryToQuantity('lots'));
});
