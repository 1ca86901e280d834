// `docker top`: ps_args read as procps reads them, the container's /proc snapshot in dockerd's columns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSnapshot } from '../../../../src/dockerapi/containers/proc-snapshot.js';
import { psColumns, topTable } from '../../../../src/dockerapi/containers/top.js';

const US = '\x1f';
const RS = '\x1e';
const status = (uid: number, rssKb: number): string =>
  `Name:\tx\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nGid:\t${uid}\t${uid}\t${uid}\t${uid}\nVmSize:\t    2268 kB\nVmRSS:\t    ${rssKb} kB\n`;
/** pid 1 started 10 s after boot, has used 2 s of CPU; pid 7 is a child of 1 on pts/0; 40 and 41 are the snapshot's shell and cat */
const text = [
  `40${US}1000.50 900.00\n${US}cpu  1 2 3\nbtime 1700000000\n${US}MemTotal:       2000000 kB\n${US}root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n`,
  `1${US}1 (sleep) S 0 1 1 0 -1 4194560 0 0 0 0 150 50 0 0 20 0 1 0 1000 2322432 345 18446744073709551615${US}${status(0, 1380)}${US}sleep\x00600\x00`,
  `7${US}7 (my (odd) cmd) R 1 7 7 34816 7 4194560 0 0 0 0 0 0 0 0 20 5 3 0 2000 2322432 345 18446744073709551615${US}${status(1000, 100000)}${US}`,
  `40${US}40 (sh) S 0 40 40 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99000 2322432 345 0${US}${status(0, 1)}${US}/bin/sh\x00-c\x00…\x00`,
  `41${US}41 (cat) R 40 40 40 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99001 2322432 345 0${US}${status(0, 1)}${US}cat\x00/proc/41/stat\x00`,
  `99${US}${US}${US}`,
].join(RS);

test('the snapshot: every process but the reading shell and its children, and one that ended while read', () => {
  const s = parseSnapshot(text)!;
  assert.deepEqual(
    s.procs.map((p) => [p.pid, p.ppid, p.comm, p.args, p.uid]),
    [
      [1, 0, 'sleep', ['sleep', '600'], 0],
      [7, 1, 'my (odd) cmd', [], 1000],
    ],
  );
  assert.equal(s.bootTime, 1700000000);
  assert.equal(s.memTotalKb, 2000000);
  assert.equal(s.users.get(1000), 'app');
  assert.equal(parseSnapshot('sh: cat: not found'), undefined);
});

test('ps_args as dockerd passes them to ps: -ef by default, aux, -o lists with titles of their own', () => {
  const s = parseSnapshot(text)!;
  const now = 1700000000 + 1000.5; // the snapshot's uptime
  const full = topTable(s, psColumns(''), now);
  assert.deepEqual(full.Titles, ['UID', 'PID', 'PPID', 'C', 'STIME', 'TTY', 'TIME', 'CMD']);
  // 2 s of CPU over 990.5 s running: 0 %; the child on pts/0, named by its comm in brackets without arguments
  assert.deepEqual(
    full.Processes.map((r) => [r[0], r[1], r[2], r[3], r[5], r[6], r[7]]),
    [
      ['root', '1', '0', '0', '?', '00:00:02', 'sleep 600'],
      ['app', '7', '1', '0', 'pts/0', '00:00:00', '[my (odd) cmd]'],
    ],
  );
  assert.match(full.Processes[0][4], /^\d\d:\d\d$/, 'started within the day: its time');
  assert.deepEqual(topTable(s, psColumns('-ef'), now), full);

  const aux = topTable(s, psColumns('aux'), now);
  assert.deepEqual(aux.Titles, ['USER', 'PID', '%CPU', '%MEM', 'VSZ', 'RSS', 'TTY', 'STAT', 'START', 'TIME', 'COMMAND']);
  assert.deepEqual(
    aux.Processes[0].filter((_, i) => i !== 8),
    ['root', '1', '0.2', '0.0', '2268', '1380', '?', 'Ss', '0:02', 'sleep 600'],
  );
  assert.deepEqual(
    aux.Processes[1].filter((_, i) => i !== 8),
    ['app', '7', '0.0', '5.0', '2268', '100000', 'pts/0', 'RNsl+', '0:00', '[my (odd) cmd]'],
  );

  assert.deepEqual(topTable(s, psColumns('-o pid,args'), now), {
    Titles: ['PID', 'COMMAND'],
    Processes: [
      ['1', 'sleep 600'],
      ['7', '[my (odd) cmd]'],
    ],
  });
  assert.deepEqual(topTable(s, psColumns('-eo pid,user,comm'), now).Processes[1], ['7', 'app', 'my (odd) cmd']);
  assert.deepEqual(topTable(s, psColumns('axo pid,etime'), now).Processes[0], ['1', '16:30']);
  assert.deepEqual(
    psColumns('-o pid,comm=Name,x').map((c) => c.title),
    ['PID', 'Name,x'],
    'a title runs to the end of the list',
  );
  assert.deepEqual(
    psColumns('-e').map((c) => c.title),
    ['PID', 'TTY', 'TIME', 'CMD'],
  );
});

test('what top cannot answer is refused as dockerd and ps refuse it', () => {
  assert.throws(
    () => psColumns('-o args'),
    (err: { status?: number; message: string }) => err.status === 500 && err.message === "Couldn't find PID field in ps output",
  );
  assert.throws(() => psColumns('-o pid=P'), /Couldn't find PID field/, 'dockerd finds the PID column by its title');
  assert.throws(() => psColumns('-o pid,bogus'), /unknown user-defined format specifier "bogus"/);
  assert.throws(() => psColumns('-l'), /ps option -l is not supported: berth serve's top reads the container's \/proc/);
  assert.throws(() => psColumns('--forest'), /ps option --forest is not supported/);
  assert.throws(() => psColumns('-o'), /needs a format list/);
});
