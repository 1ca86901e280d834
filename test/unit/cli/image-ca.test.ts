// `berth image-ca DIR`: the CA written with what the nodes and berth need next; an existing CA is kept, a bad range
// refused, each with one line on stderr and nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { scratchDir } from '../../util/scratch.js';

const main = path.join(import.meta.dirname, '../../../src/cli/main.js');
const berth = (args: string[]) => spawnSync(process.execPath, [main, 'image-ca', ...args], { encoding: 'utf8' });

test('it writes the CA and says how the nodes trust it and how berth uses it; a second run keeps the first CA', () => {
  const dir = path.join(scratchDir('berth-image-ca-'), 'ca');
  const made = berth([dir, '--ip-range', '10.244.0.0/16', '--days', '30']);
  assert.equal(made.status, 0, made.stderr);
  assert.match(
    made.stdout,
    new RegExp(`^berth image-ca: wrote ${dir}/tls\\.crt and ${dir}/tls\\.key \\(valid 30 days; names 10\\.244\\.0\\.0/16, no DNS name\\)$`, 'm'),
  );
  assert.match(made.stdout, /_default\/hosts\.toml holding\n {2}ca = /);
  assert.match(made.stdout, new RegExp(`--image-server-ca ${dir}`));
  const cert = readFileSync(path.join(dir, 'tls.crt'), 'utf8');
  assert.equal(new X509Certificate(cert).ca, true);
  const again = berth([dir]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /^berth image-ca: .*tls\.crt exists: berth keeps a CA the nodes may already trust/);
  assert.equal(readFileSync(path.join(dir, 'tls.crt'), 'utf8'), cert);
});

test('a range with host bits, or days that are no number: refused before anything is written', () => {
  const dir = path.join(scratchDir('berth-image-ca-'), 'ca');
  const bad = berth([dir, '--ip-range', '10.244.1.0/16']);
  assert.deepEqual([bad.status, bad.stderr], [1, "berth image-ca: 10.244.1.0/16: the address has bits set past the /16 (give the range's first address)\n"]);
  const days = berth([dir, '--days', 'soon']);
  assert.deepEqual([days.status, days.stderr], [1, 'berth image-ca: --days soon: give a whole number of days, 1 or more\n']);
  assert.equal(existsSync(dir), false);
});
