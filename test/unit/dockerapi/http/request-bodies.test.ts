// Client errors are 400s naming the field: wrong JSON types, values that would fail at start, bad signals, bad escapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkBody } from '../../../../src/dockerapi/http/request-bodies.js';
import { checkCreateValues, checkPublishAll } from '../../../../src/dockerapi/containers/create-checks.js';
import { decodePathPart, DockerError } from '../../../../src/dockerapi/http/http.js';
import type { CreateBody } from '../../../../src/dockerapi/model.js';
import { parseSignal } from '../../../../src/dockerapi/containers/signals.js';

const is400 =
  (pattern: RegExp) =>
  (err: unknown): boolean =>
    err instanceof DockerError && err.status === 400 && pattern.test(err.message);

test('wrong JSON types are 400s naming the field', () => {
  assert.throws(() => checkBody('create', { Image: 5 }), is400(/^invalid JSON: Image must be a string, not a number$/));
  assert.throws(() => checkBody('create', { Image: 'x', Env: ['A=1', 2] }), is400(/Env\[1\] must be a string/));
  assert.throws(() => checkBody('create', { Image: 'x', HostConfig: { Memory: '1g' } }), is400(/HostConfig\.Memory must be an integer, not a string/));
  assert.throws(() => checkBody('create', { Image: 'x', Labels: { a: 1 } }), is400(/Labels\.a must be a string/));
  assert.throws(() => checkBody('create', { Image: 'x', Tty: 'yes' }), is400(/Tty must be a boolean/));
  assert.throws(() => checkBody('create', ['x']), is400(/the body must be an object, not an array/));
  assert.throws(() => checkBody('exec', { Cmd: 5 }), is400(/Cmd/));
  assert.throws(() => checkBody('execStart', { Detach: 'no' }), is400(/Detach must be a boolean/));
  assert.throws(() => checkBody('networkCreate', { Name: ['n'] }), is400(/Name must be a string/));
  assert.throws(() => checkBody('networkConnect', { Container: 'c', EndpointConfig: { Aliases: 'a' } }), is400(/EndpointConfig\.Aliases/));
  assert.throws(() => checkBody('volumeCreate', { Labels: [] }), is400(/Labels/));
  const ok = { Image: 'busybox', Cmd: 'sh', Env: null, HostConfig: { Memory: 64 << 20, PortBindings: { '80/tcp': [{ HostPort: '' }] } }, Unknown: { any: 1 } };
  assert.equal(checkBody('create', ok), ok, 'unknown fields pass, as dockerd ignores them');
});

test('a null where the API has a number, string or boolean is the zero value, as Go decodes it', () => {
  // docker-py's Healthcheck sends the values not given as null
  const hc = checkBody<CreateBody>('create', {
    Image: 'x',
    Tty: null,
    Healthcheck: { Test: ['CMD', 'true'], Interval: 1e9, Timeout: null, Retries: null, StartPeriod: null },
  });
  assert.deepEqual(hc.Healthcheck, { Test: ['CMD', 'true'], Interval: 1e9 });
  assert.equal('Tty' in hc, false);
  checkCreateValues(hc);
  assert.equal(checkBody<{ Detach?: boolean }>('execStart', { Detach: null }).Detach, undefined);
  assert.throws(() => checkBody('create', { Image: 'x', Env: [null] }), is400(/Env\[0\] must be a string, not null/));
});

test('values that would fail at start are 400s at create', () => {
  const bad = (body: CreateBody, pattern: RegExp): void => assert.throws(() => checkCreateValues(body), is400(pattern));
  bad({ Env: ['=x'] }, /invalid environment variable/);
  bad({ HostConfig: { Memory: -1 } }, /Memory/);
  bad({ HostConfig: { Memory: 1024 } }, /Minimum memory limit allowed is 6MB/);
  bad({ HostConfig: { NanoCpus: -5 } }, /NanoCpus/);
  bad({ ExposedPorts: { 'abc/tcp': {} } }, /invalid port specification: "abc\/tcp"/);
  bad({ ExposedPorts: { '99999/tcp': {} } }, /invalid port specification/);
  bad({ HostConfig: { PortBindings: { '80/tcp': [{ HostPort: 'x' }] } } }, /invalid hostPort/);
  bad({ HostConfig: { PortBindings: { '80/tcp': [{ HostIp: 'nope', HostPort: '80' }] } } }, /invalid host IP/);
  bad({ WorkingDir: 'relative' }, /needs to be an absolute path/);
  bad({ Hostname: 'not_a_label' }, /invalid hostname/);
  bad({ HostConfig: { Tmpfs: { 'run/x': '' } } }, /mount path must be absolute/);
  bad({ HostConfig: { Binds: ['data:relative'] } }, /mount path must be absolute/);
  bad({ Healthcheck: { Interval: 5 } }, /Interval in Healthcheck cannot be less than 1ms/);
  checkCreateValues({
    Env: ['A=1', 'B', 'C='],
    ExposedPorts: { '80/tcp': {}, '53/udp': {} },
    HostConfig: { Memory: 0, NanoCpus: 5e8, PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '0' }] } },
    WorkingDir: '/w',
    Hostname: 'db',
  });
});

test('-P with an exposed UDP port is refused naming the port; without -P, or with TCP ports only, it passes', () => {
  assert.throws(
    () => checkPublishAll({ ExposedPorts: { '80/tcp': {}, '53/udp': {} }, HostConfig: { PublishAllPorts: true } }),
    is400(/^cannot publish 53\/udp \(exposed by the image or --expose; -P publishes every exposed port\): berth publishes TCP ports only .*-p instead of -P/),
  );
  checkPublishAll({ ExposedPorts: { '80/tcp': {}, '53/udp': {} }, HostConfig: { PublishAllPorts: false } });
  checkPublishAll({ ExposedPorts: { '80/tcp': {}, '81': {} }, HostConfig: { PublishAllPorts: true } });
});

test('signals as dockerd takes them; others are 400', () => {
  assert.equal(parseSignal('SIGTERM'), 'TERM');
  assert.equal(parseSignal('hup'), 'HUP');
  assert.equal(parseSignal('9'), '9');
  assert.equal(parseSignal('RTMIN+3'), 'RTMIN+3');
  for (const s of ['FOO', '0', '65', 'SIG', 'TERM; rm -rf /']) assert.throws(() => parseSignal(s), is400(/^Invalid signal: /));
});

test('a malformed %-escape in the path is a 400', () => {
  assert.equal(decodePathPart('a%2Fb'), 'a/b');
  assert.throws(() => decodePathPart('%zz'), is400(/invalid %-escape/));
  assert.throws(() => decodePathPart('%E0%A4%A'), is400(/invalid %-escape/));
});
