// A `POST /build` query as the classic builder's clients send it, read into what berth's builder pod is told: the
// refusals are 400s that say what to do, before anything exists in the cluster; builderArgs is buildah's argv.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builderArgs, parseBuildRequest, type BuildRequest } from '../../../../src/dockerapi/images/build-request.js';

const parse = (query: string): BuildRequest => parseBuildRequest(new URLSearchParams(query));

/** A 400 whose message matches `words`. */
function refused(query: string, words: RegExp): void {
  assert.throws(
    () => parse(query),
    (err: Error & { status?: number }) => err.status === 400 && words.test(err.message),
    query,
  );
}

test('a bare request: the context Dockerfile, no tags, no options', () => {
  assert.deepEqual(parse(''), {
    tags: [],
    dockerfile: 'Dockerfile',
    buildArgs: {},
    labels: {},
    noCache: false,
    quiet: false,
    extraHosts: [],
  });
});

test('tags are normalized as docker stores them; a tag that is no reference, or a digest, is refused', () => {
  assert.deepEqual(parse('t=myimg&t=user/app:2&t=localhost:5000/team/app').tags, [
    'docker.io/library/myimg:latest',
    'docker.io/user/app:2',
    'localhost:5000/team/app:latest',
  ]);
  refused('t=MyImg', /invalid tag "MyImg": invalid reference format \(give NAME\[:TAG\], lower case\)/);
  refused(`t=${encodeURIComponent(`app@sha256:${'a'.repeat(64)}`)}`, /invalid tag .*give NAME\[:TAG\]/);
});

test('what berth serve does not build is refused saying what to do instead', () => {
  refused('version=2', /classic builder .*build without buildx \(DOCKER_BUILDKIT=0\)/);
  refused('remote=https%3A%2F%2Fgithub.com%2Fx%2Fy.git', /remote build context \(https:\/\/github\.com\/x\/y\.git\).*send the context as a tar body/);
  refused('outputs=%5B%7B%22Type%22%3A%22local%22%7D%5D', /build outputs are a BuildKit option/);
  refused('platform=linux%2Farm64', /builds for the cluster's nodes \(linux\/amd64\), not linux\/arm64/);
  refused('platform=windows', /not windows/);
  refused('target=-x', /invalid target stage "-x"/);
  assert.equal(parse('version=1').tags.length, 0, 'version 1 is the classic builder');
  assert.equal(parse('platform=linux%2Famd64').dockerfile, 'Dockerfile');
  assert.equal(parse('platform=linux').dockerfile, 'Dockerfile');
  assert.equal(parse('target=build-stage.2').target, 'build-stage.2');
});

test('the Dockerfile is a path inside the context; one outside it is refused', () => {
  assert.equal(parse('dockerfile=.%2Fdocker%2FDockerfile.dev').dockerfile, 'docker/Dockerfile.dev');
  assert.equal(parse('dockerfile=a%2F..%2FDockerfile').dockerfile, 'Dockerfile');
  for (const outside of ['../Dockerfile', '/etc/Dockerfile', 'a/../../Dockerfile', '..'])
    refused(`dockerfile=${encodeURIComponent(outside)}`, /is outside the build context: give its path inside the context/);
});

test('buildargs and labels: JSON objects of strings; a null build arg is left out; anything else a 400 naming the key', () => {
  const req = parse(`buildargs=${encodeURIComponent('{"A":"1","UNSET":null,"B":""}')}&labels=${encodeURIComponent('{"org.x":"y"}')}`);
  assert.deepEqual(req.buildArgs, { A: '1', B: '' });
  assert.deepEqual(req.labels, { 'org.x': 'y' });
  for (const key of ['buildargs', 'labels']) {
    refused(`${key}=not-json`, new RegExp(`^${key} must be a JSON object of strings: not-json$`));
    refused(`${key}=${encodeURIComponent('["A"]')}`, new RegExp(`^${key} must be a JSON object of strings`));
    refused(`${key}=null`, new RegExp(`^${key} must be a JSON object of strings`));
    refused(`${key}=${encodeURIComponent('{"N":1}')}`, new RegExp(`^${key}: the value of N must be a string$`));
  }
  assert.deepEqual(parse(`labels=${encodeURIComponent('{"N":null}')}`).labels, {});
});

test('extrahosts: a JSON list, a bare HOST:IP, or the key repeated as the docker CLI sends it', () => {
  assert.deepEqual(parse(`extrahosts=${encodeURIComponent('["a:10.0.0.1","b:::1"]')}`).extraHosts, ['a:10.0.0.1', 'b:::1']);
  assert.deepEqual(parse('extrahosts=db%3A10.0.0.2').extraHosts, ['db:10.0.0.2']);
  assert.deepEqual(parse('extrahosts=a%3A10.0.0.1&extrahosts=b%3A10.0.0.2').extraHosts, ['a:10.0.0.1', 'b:10.0.0.2']);
  refused('extrahosts=nohost', /extrahosts: invalid host entry "nohost" \(give HOST:IP\)/);
  refused(`extrahosts=${encodeURIComponent('[1]')}`, /extrahosts: invalid host entry 1 \(give HOST:IP\)/);
});

test('nocache and q: 1 and true are true, anything else false', () => {
  assert.equal(parse('nocache=1').noCache, true);
  assert.equal(parse('nocache=true').noCache, true);
  assert.equal(parse('nocache=0').noCache, false);
  assert.equal(parse('q=1').quiet, true);
  assert.equal(parse('q=True').quiet, true);
  assert.equal(parse('q=false').quiet, false);
  assert.equal(parse('q=1').noCache, false);
});

test('builderArgs: buildah options in order, the Dockerfile inside the context dir', () => {
  assert.deepEqual(builderArgs(parse(''), '/context'), ['-f', '/context/Dockerfile']);
  const req = parse(
    [
      'dockerfile=sub%2FDockerfile',
      `buildargs=${encodeURIComponent('{"A":"1 2","B":"x=y"}')}`,
      `labels=${encodeURIComponent('{"l":"v"}')}`,
      'target=final',
      'nocache=1',
      'q=1',
      'extrahosts=a%3A10.0.0.1&extrahosts=b%3A10.0.0.2',
      't=app',
    ].join('&'),
  );
  assert.deepEqual(builderArgs(req, '/context'), [
    '-f',
    '/context/sub/Dockerfile',
    '--build-arg',
    'A=1 2',
    '--build-arg',
    'B=x=y',
    '--label',
    'l=v',
    '--target',
    'final',
    '--no-cache',
    '--add-host',
    'a:10.0.0.1',
    '--add-host',
    'b:10.0.0.2',
  ]);
});
