// Published ports of `berth serve` when the way into the pod fails: refused port-forwards are retried,
// a dropped forward ends only its connection, a restarted container is reachable again, and
// `--port-mode direct` reaches the pod IP without any port-forward. Faults come from the dev cluster.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { BUSYBOX, apiRequest, freshNamespace } from '../harness/cluster.js';
import { bindServeRole, type DockerEngine, startBerth, stopAndCheckLeftovers } from './serve-env.js';
import { eventually } from '../../util/eventually.js';

const prefix = `bp${process.pid}`;
const FAULTS = '/berth-dev/v1/faults';
// The page is a random id written at start: a restart (a new pod) serves a different one. /cgi-bin/slow answers
// after a second, so a forward the fault cuts a moment after it connected is cut before any answer, on every cluster.
const SLOW_CGI = "{ echo '#!/bin/sh'; echo 'sleep 1'; echo 'printf \"Content-Type: text/plain\\r\\n\\r\\nslow\\n\"'; } > /tmp/cgi-bin/slow";
const HTTPD = [
  'sh',
  '-c',
  `cat /proc/sys/kernel/random/uuid > /tmp/index.html; mkdir /tmp/cgi-bin; ${SLOW_CGI}; chmod +x /tmp/cgi-bin/slow; exec httpd -f -p 8080 -h /tmp`,
];

async function setFaults(faults: Record<string, number>): Promise<Record<string, number>> {
  const r = await apiRequest('PUT', FAULTS, { body: faults });
  assert.equal(r.code, 200, JSON.stringify(r.body));
  return r.body as Record<string, number>;
}

/** One GET on a fresh connection (no pooled socket may hide a new forward): the body, or the error. */
function get(port: number, path = '/index.html'): Promise<{ body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 30_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(res.statusCode === 200 ? { body } : { error: `HTTP ${res.statusCode}` }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ error: e.message }));
  });
}

/** httpd starts listening a moment after its container runs: ask until it answers (or 20 s pass). */
function getWhenServing(port: number): Promise<string> {
  return eventually(
    `port ${port} answers`,
    async () => {
      const r = await get(port);
      if (r.body === undefined) throw new Error(r.error);
      return r.body;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
}

for (const mode of ['forward', 'direct'] as const) {
  describe(`published ports, --port-mode ${mode}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `${prefix}-${mode}`;
    const names: string[] = [];
    const ok = (args: string[]): Promise<string> => engine.dockerOk(args);
    const hostPort = async (c: string): Promise<number> => {
      const out = (
        await ok([
          'inspect',
          '-f',
          '{{(index (index .NetworkSettings.Ports "8080/tcp") 0).HostIp}} {{(index (index .NetworkSettings.Ports "8080/tcp") 0).HostPort}}',
          c,
        ])
      ).trim();
      const [ip, port] = out.split(' ');
      assert.equal(ip, '127.0.0.1');
      assert.match(port ?? '', /^\d+$/);
      return Number(port);
    };
    const runHttpd = async (n: string): Promise<number> => {
      const c = `${prefix}-${mode}-${n}`;
      names.push(c);
      await ok(['run', '-d', '--name', c, '-p', '127.0.0.1::8080', BUSYBOX, ...HTTPD]);
      return hostPort(c);
    };

    before(async () => {
      namespace = await freshNamespace(`serve-ports-${mode}`);
      // As the user holding only the shipped Role: port-forward must be in it.
      await bindServeRole(namespace, 'shim');
      engine = await startBerth(namespace, instance, { user: 'shim', extra: ['--port-mode', mode] });
      await ok(['pull', BUSYBOX]);
    });

    after(async () => {
      try {
        await setFaults({ failPortForwards: 0, dropStreams: 0 });
        for (const n of names) await engine.docker(['rm', '-f', n]);
      } finally {
        await stopAndCheckLeftovers(engine, namespace, instance);
      }
    });

    if (mode === 'forward') {
      test('three refused port-forwards: the connection still gets its answer (the retries used up the fault)', async () => {
        const port = await runHttpd('retry');
        const page = await getWhenServing(port);
        assert.equal((await setFaults({ failPortForwards: 3 })).failPortForwards, 3);
        assert.deepEqual(await get(port), { body: page });
        const left = await apiRequest('GET', FAULTS);
        assert.equal(left.body.failPortForwards, 0);
      });

      test('a forward dropped mid-connection ends that connection; the next connection works', async () => {
        const port = await runHttpd('drop');
        const page = await getWhenServing(port);
        assert.deepEqual(await get(port, '/cgi-bin/slow'), { body: 'slow\n' }, 'the slow page answers without the fault');
        await setFaults({ dropStreams: 1 });
        let dropped;
        try {
          dropped = await get(port, '/cgi-bin/slow');
        } finally {
          await setFaults({ dropStreams: 0 });
        }
        assert.equal(dropped.body, undefined, 'the dropped connection still delivered a page');
        assert.match(dropped.error ?? '', /socket hang up|ECONNRESET/);
        assert.deepEqual(await get(port), { body: page });
      });

      test('after docker restart the HostPort inspect reports reaches the new pod', async () => {
        const c = `${prefix}-${mode}-restart`;
        const before = await getWhenServing(await runHttpd('restart'));
        await ok(['restart', '-t', '1', c]);
        const after = await getWhenServing(await hostPort(c));
        assert.notEqual(after, before, 'the page came from the old pod');
      });
    } else {
      test('direct: the pod IP answers while every port-forward would be refused', async () => {
        assert.equal((await setFaults({ failPortForwards: 100 })).failPortForwards, 100);
        try {
          const port = await runHttpd('direct');
          assert.ok((await getWhenServing(port)).trim().length > 0);
          const faults = await apiRequest('GET', FAULTS);
          assert.equal(faults.body.failPortForwards, 100, 'a port-forward was attempted in direct mode');
        } finally {
          await setFaults({ failPortForwards: 0 });
        }
      });
    }
  });
}
