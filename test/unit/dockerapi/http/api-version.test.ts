// The API versions berth admits, and what changes shape between them (dockerd's version history, 1.44 to 1.52).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSION, DEFAULT_MIN_API_VERSION, parseMinApiVersion, since } from '../../../../src/dockerapi/http/api-version.js';
import { Engine } from '../../../../src/dockerapi/engine.js';
import { inspectContainer, listItem } from '../../../../src/dockerapi/containers/container-view.js';
import { imageListItem, inspectImage } from '../../../../src/dockerapi/images/image-view.js';
import { FakeCluster } from '../fake-cluster.js';
import { UNIT_IMAGE, unitEngine } from '../unit-engine.js';

const IMAGE = UNIT_IMAGE;

test('berth announces what dockerd 29.0 does: API 1.52, minimum 1.44', () => {
  assert.equal(API_VERSION, '1.52');
  assert.equal(DEFAULT_MIN_API_VERSION, '1.44');
  assert.equal(since('1.52', '1.45'), true);
  assert.equal(since('1.44', '1.45'), false);
  assert.equal(since('1.100', '1.52'), true, 'minor versions compare as numbers');
});

test('a minimum is a version between 1.24 and 1.52, refused otherwise with the range', () => {
  assert.equal(parseMinApiVersion('1.24', '--min-api-version'), '1.24');
  assert.equal(parseMinApiVersion(' v1.41 ', '$DOCKER_MIN_API_VERSION'), '1.41');
  assert.throws(
    () => parseMinApiVersion('1.12', '--min-api-version'),
    /^Error: --min-api-version 1\.12: berth serves API versions 1\.24 to 1\.52; give one in that range$/,
  );
  assert.throws(() => parseMinApiVersion('1.53', '--min-api-version'), /1\.24 to 1\.52/);
  assert.throws(() => parseMinApiVersion('latest', '$DOCKER_MIN_API_VERSION'), /^Error: \$DOCKER_MIN_API_VERSION "latest": give an API version such as 1\.44$/);
});

async function engineWithAliasedContainer(): Promise<{ engine: Engine; id: string }> {
  const cluster = new FakeCluster();
  const engine = unitEngine(cluster);
  engine.networks.create({ Name: 'app' });
  const c = await engine.create('db', { Image: IMAGE, Cmd: ['sleep', '60'], NetworkingConfig: { EndpointsConfig: { app: { Aliases: ['postgres'] } } } });
  await engine.start('db');
  return { engine, id: c.id };
}

type Settings = { IPAddress?: string; Networks: Record<string, { Aliases: string[] | null; DNSNames: string[] | null; IPAddress: string }> };

test("a container's network endpoint: Aliases as created from 1.45 (the short id before), DNSNames, no top-level IPAddress from 1.52", async () => {
  const { engine, id } = await engineWithAliasedContainer();
  const c = engine.container('db');
  const settings = (version: string): Settings =>
    (inspectContainer(c, engine.networks.records, engine.mountsOf(c), version) as { NetworkSettings: Settings }).NetworkSettings;
  const shortId = id.slice(0, 12);
  assert.deepEqual(settings('1.44').Networks.app.Aliases, ['postgres', shortId]);
  assert.deepEqual(settings('1.45').Networks.app.Aliases, ['postgres']);
  assert.deepEqual(settings('1.52').Networks.app.DNSNames, ['db', 'postgres', shortId]);
  assert.equal(settings('1.51').IPAddress, c.podIP);
  assert.equal('IPAddress' in settings('1.52'), false);
  assert.equal(settings('1.52').Networks.app.IPAddress, c.podIP, "the endpoint's own address stays");
  const listed = listItem(c, engine.networks.records, engine.mountsOf(c), '1.52') as { NetworkSettings: Settings };
  assert.deepEqual(listed.NetworkSettings.Networks.app.Aliases, ['postgres']);
  await engine.remove('db', true);
});

test('image inspect leaves unset config out from 1.52; the list counts containers from 1.51 and drops VirtualSize from 1.44', async () => {
  const { engine } = await engineWithAliasedContainer();
  const image = engine.images.find(IMAGE);
  const config = (version: string): Record<string, unknown> => (inspectImage(image, 'amd64', version) as { Config: Record<string, unknown> }).Config;
  assert.deepEqual(config('1.51'), { User: '', ExposedPorts: null, Env: [], Cmd: null, Entrypoint: null, WorkingDir: '', Labels: {} });
  assert.deepEqual(config('1.52'), { ExposedPorts: null });
  assert.equal('Parent' in inspectImage(image, 'amd64', '1.52'), false);
  const withInfo = {
    ...image,
    info: { config: { Cmd: ['sh'], Env: ['A=1'] }, configDigest: 'sha256:c', repoDigest: 'x@sha256:m', architecture: 'amd64', os: 'linux' },
  };
  assert.deepEqual((inspectImage(withInfo, 'amd64', '1.52') as { Config: unknown }).Config, { ExposedPorts: null, Env: ['A=1'], Cmd: ['sh'] });
  assert.equal(imageListItem(image, '1.50', 1).Containers, -1);
  assert.equal(imageListItem(image, '1.51', 1).Containers, 1);
  assert.equal('VirtualSize' in imageListItem(image, '1.44', 1), false);
  assert.equal(imageListItem(image, '1.43', 1).VirtualSize, 0);
  await engine.remove('db', true);
});
