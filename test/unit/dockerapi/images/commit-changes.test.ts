import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyChanges } from '../../../../src/dockerapi/images/commit-changes.js';

test('docker commit --change: each Dockerfile instruction dockerd takes, applied in order over the config', () => {
  const base = { Env: ['PATH=/bin', 'A=old'], Cmd: ['sh'], Labels: { keep: '1' } };
  const changed = applyChanges(base, [
    'ENV A=new B="two words"',
    'ENV C three words',
    'CMD ["echo", "hi"]',
    'ENTRYPOINT /bin/run --flag',
    'LABEL team=ci',
    'EXPOSE 8080 53/udp',
    'VOLUME ["/data"]',
    'USER 1000:1000',
    'WORKDIR /srv',
    'STOPSIGNAL SIGINT',
  ]);
  assert.deepEqual(changed, {
    Env: ['PATH=/bin', 'A=new', 'B=two words', 'C=three words'],
    Cmd: ['echo', 'hi'],
    Entrypoint: ['/bin/sh', '-c', '/bin/run --flag'],
    Labels: { keep: '1', team: 'ci' },
    ExposedPorts: { '8080/tcp': {}, '53/udp': {} },
    Volumes: { '/data': {} },
    User: '1000:1000',
    WorkingDir: '/srv',
    StopSignal: 'SIGINT',
  });
  assert.deepEqual(base.Env, ['PATH=/bin', 'A=old'], 'the config given is not changed');
});

test('a change value of several lines is several changes, as dockerd reads them (testcontainers-node joins its list so)', () => {
  const changed = applyChanges({ Labels: { 'org.testcontainers.session-id': 'abc' } }, ['ENV FROM_COMMIT=yes\nLABEL org.testcontainers.session-id=\r\n']);
  assert.deepEqual(changed, { Labels: { 'org.testcontainers.session-id': '' }, Env: ['FROM_COMMIT=yes'] });
});

test('what dockerd refuses in --change is refused in its words (400)', () => {
  const refused = (change: string, words: RegExp): void =>
    assert.throws(
      () => applyChanges({}, [change]),
      (err: Error & { status?: number }) => err.status === 400 && words.test(err.message),
    );
  refused('RUN make', /^RUN is not a valid change command$/);
  refused('COPY . /', /^COPY is not a valid change command$/);
  refused('ENV', /ENV requires at least one argument/);
  refused('ENV ONLYKEY', /ENV names must be followed by a value/);
  refused('EXPOSE http', /invalid containerPort: http/);
  refused('CMD ["unclosed"', /CMD \["unclosed": a JSON array of strings, or a shell command/);
});
