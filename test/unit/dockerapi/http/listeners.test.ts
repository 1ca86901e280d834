// Listeners are what they say: loopback by resolved address, unix sockets replaced only when stale, tokens long enough.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync, existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { isLoopbackAddress, resolveLoopback } from '../../../../src/dockerapi/http/loopback.js';
import { Router } from '../../../../src/dockerapi/http/http.js';
import { checkListenerSecurity, parseListener, serveDockerApi } from '../../../../src/dockerapi/http/server.js';
import { TOKEN_ENV, checkToken, resolveToken } from '../../../../src/dockerapi/http/token.js';
import { claimSocketPath } from '../../../../src/dockerapi/http/unix-socket.js';
import { scratchDir } from '../../../util/scratch.js';

test('loopback addresses: v4 127/8, ::1, v4-mapped; nothing else', () => {
  for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '[::1]']) assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['0.0.0.0', '10.0.0.1', '::', '::ffff:10.0.0.1', 'localhost', '127.0.0.1.nip.io']) assert.equal(isLoopbackAddress(a), false, a);
});

test('a name is loopback only when every address it resolves to is', async () => {
  assert.deepEqual(await resolveLoopback('localhost', async () => ['127.0.0.1', '::1']), { loopback: true, addresses: ['127.0.0.1', '::1'] });
  assert.equal((await resolveLoopback('127.0.0.1.nip.io', async () => ['127.0.0.1', '10.1.2.3'])).loopback, false);
  assert.equal((await resolveLoopback('nowhere.invalid', async () => Promise.reject(new Error('ENOTFOUND')))).loopback, false);
  assert.equal((await resolveLoopback('127.0.0.1')).loopback, true, 'a literal is not looked up');
  await assert.rejects(
    checkListenerSecurity([parseListener('tcp://127.0.0.1.nip.io:2375')], { resolve: async () => ['93.184.216.34'] }),
    /not a loopback address \(it resolves to 93\.184\.216\.34\)/,
  );
});

test('tokens: at least 16 characters, from --token, --token-file or the environment', () => {
  assert.throws(() => checkToken('x', '--token'), /1 characters, at least 16/);
  const dir = scratchDir('berth-token-');
  try {
    const file = join(dir, 'token');
    writeFileSync(file, 'from-a-file-0123456789\n');
    assert.equal(resolveToken({ tokenFile: file }, {}), 'from-a-file-0123456789');
    assert.equal(resolveToken({}, { [TOKEN_ENV]: 'from-the-environment-01' }), 'from-the-environment-01');
    assert.equal(resolveToken({ token: 'the-flag-wins-over-env' }, { [TOKEN_ENV]: 'from-the-environment-01' }), 'the-flag-wins-over-env');
    assert.equal(resolveToken({}, {}), undefined);
    assert.throws(() => resolveToken({ token: 'a'.repeat(20), tokenFile: file }, {}), /give one/);
    assert.throws(() => resolveToken({ tokenFile: join(dir, 'missing') }, {}), /--token-file .*ENOENT/);
    assert.throws(() => resolveToken({}, { [TOKEN_ENV]: 'short' }), /\$BERTH_SERVE_TOKEN: the token has 5 characters/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a unix socket path: a live socket or a file is refused and kept, a stale socket is replaced', async () => {
  const dir = scratchDir('berth-sock-');
  try {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'precious');
    await assert.rejects(claimSocketPath(file), /not a socket; berth never deletes it/);
    assert.ok(existsSync(file));

    const path = join(dir, 'docker.sock');
    const router = new Router().add('GET', '/_ping', (call) => call.send(200, 'OK'));
    const first = await serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router });
    await assert.rejects(serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router }), /another server is listening on this socket/);
    assert.ok(existsSync(path), "the first server's socket is still there");
    await first.close();

    // what a SIGKILLed server leaves behind: a socket file nobody listens on
    const holder = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    assert.ok(existsSync(path), 'the killed server left its socket file');
    const second = await serveDockerApi({ listeners: [parseListener(`unix://${path}`)], router });
    await second.close();
    assert.equal(existsSync(path), false, 'close removes its own socket');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
