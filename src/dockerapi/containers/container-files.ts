/**
 * A Docker container's files, moved through exec in its pod: tar in (PUT archive, also queued for a
 * container not yet started), tar out and stat (GET/HEAD archive, in one exec). A container that was
 * created and never started is read through a peek pod of its image (peek.ts).
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { ArchiveError, recordPadding, type HeldTar } from '../../runtime/files.js';
import { tarPieces, type ArchiveSpill, type KeptTar } from './archive-spill.js';
import { SANDBOX_CONTAINER } from '../../runtime/sandbox-plan.js';
import type { ServeCluster } from '../cluster.js';
import { parseStatLines, statArgv, tarArgv, type PathStat } from './archive-exec.js';
import { DockerError, badRequest, conflict, notFound } from '../http/http.js';
import type { ContainerRecord } from '../model.js';
import { PeekFailed, type PeekPods, type PeekSource } from './peek.js';
import { StreamLost } from '../../kube/errors.js';
import { RunSink } from './resumed-read.js';
import { StreamDigest } from '../../runtime/stream-digest.js';

/** How often a command that only reads (stat, tar out) is run when its stream is lost. */
const READ_ATTEMPTS = 3;

/** `$1` = destination. Reads one line first: `go` unpacks the rest of stdin there, anything else (or EOF) changes nothing. */
const WAIT_FOR_GO = 'IFS= read -r go && [ "$go" = go ] || exit 0';
const UNPACK = 'exec tar -x -o -f - -C "$1"';
/** Copies queued before start (and replayed by a restart) may name a folder the image lacks: it is made. */
const EXTRACT_MAKING_FOLDER = `${WAIT_FOR_GO}; mkdir -p -- "$1" && ${UNPACK}`;
/** Into a running container, as dockerd: the destination must be a folder that exists (exit 3: missing, 4: not a folder). */
const EXTRACT_INTO_FOLDER = `${WAIT_FOR_GO}; [ -e "$1" ] || exit 3; [ -d "$1" ] || exit 4; ${UNPACK}`;

export interface ContainerFilesDeps {
  cluster: ServeCluster;
  peeks: PeekPods;
  /** where large archives kept for a restart go */
  spill: ArchiveSpill;
  isReaper(c: ContainerRecord): boolean;
  peekSource(c: ContainerRecord): PeekSource;
}

export class ContainerFiles {
  constructor(private readonly deps: ContainerFilesDeps) {}

  async execInPod(pod: string, argv: string[], stdin?: Readable): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const stdout = new PassThrough().on('data', (b: Buffer) => out.push(b));
    const stderr = new PassThrough().on('data', (b: Buffer) => err.push(b));
    const { done } = await this.deps.cluster.exec(pod, SANDBOX_CONTAINER, argv, { stdin, stdout, stderr });
    const r = await done;
    return { exitCode: r.exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
  }

  /** A command that changes nothing, run again when its stream was lost (see readAgainIfLost). */
  private readInPod(pod: string, argv: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    return readAgainIfLost(() => this.execInPod(pod, argv));
  }

  /**
   * Unpacks the archive at `path` in the pod, making the folder first unless `existingFolder` (then a missing
   * one is a 404 and a file a 400, in dockerd's words). Given an archive still being received and checked,
   * the process starts meanwhile (a process start in the container runtime is most of a small copy's time)
   * and waits for a go line before it touches anything: an archive refused meanwhile changes nothing.
   */
  async extractInPod(pod: string, path: string, archive: KeptTar | Promise<HeldTar>, existingFolder?: { containerName: string }): Promise<KeptTar> {
    if (!(archive instanceof Promise) && archive.length === 0) return archive;
    const arrived = Promise.resolve(archive);
    arrived.catch(() => undefined); // awaited in the input, or below when the exec never read it
    async function* input(): AsyncGenerator<Buffer> {
      let tar: KeptTar;
      try {
        tar = await arrived;
      } catch {
        // Any other line than go ends the shell unchanged (a cluster without v5 cannot end stdin for it).
        yield Buffer.from('stop\n');
        return;
      }
      yield Buffer.from(tar.length > 0 ? 'go\n' : 'stop\n');
      yield* tarPieces(tar);
      yield recordPadding(tar.length);
    }
    let r: { exitCode: number; stderr: string };
    try {
      r = await this.execInPod(pod, ['/bin/sh', '-c', existingFolder ? EXTRACT_INTO_FOLDER : EXTRACT_MAKING_FOLDER, 'berth-put', path], Readable.from(input()));
    } finally {
      // whatever the exec did, the archive's own failure is the answer, and only once it is whole
      await arrived;
    }
    if (existingFolder && r.exitCode === 3) throw notFound(`Could not find the file ${path} in container ${existingFolder.containerName}`);
    if (existingFolder && r.exitCode === 4) throw badRequest('extraction point is not a directory');
    if (r.exitCode !== 0)
      throw new ArchiveError(
        `extracting into ${path} failed (tar exit ${r.exitCode}): ${r.stderr.trim()}`,
        /No such file|can't cd|cannot change/i.test(r.stderr) ? 404 : 500,
      );
    return arrived;
  }

  /** The image's /etc/passwd and /etc/group (with what was copied in before start), '' where one is missing. */
  async userDatabase(c: ContainerRecord): Promise<{ passwd: string; group: string }> {
    return this.withFiles(c, async (pod) => {
      const passwd = await this.readInPod(pod, ['cat', '/etc/passwd']);
      const group = await this.readInPod(pod, ['cat', '/etc/group']);
      return { passwd: passwd.exitCode === 0 ? passwd.stdout : '', group: group.exitCode === 0 ? group.stdout : '' };
    });
  }

  /**
   * PUT archive: into the running container, or queued for the start of one never started (and into its
   * peek pod). `archive` may still be arriving: only a running container's copy starts before it is whole.
   */
  async put(c: ContainerRecord, path: string, archive: Promise<HeldTar>): Promise<void> {
    const early = c.status === 'running' && c.podName;
    const tar = early ? archive : await archive;
    if (c.status === 'created' && !c.podName) {
      const entry = { path, tar: await tar };
      c.pendingArchives.push(entry);
      void this.deps.spill.spill(entry);
      await this.deps.peeks.update(c.id, (pod) => this.extractInPod(pod, path, entry.tar).then(() => undefined));
      return;
    }
    if (c.status !== 'running') throw conflict(`container ${c.name} is ${c.status}: berth copies files into a running container or one not yet started`);
    const entry = { path, tar: await this.extractInPod(c.podName!, path, tar, { containerName: c.name }) };
    c.copiedArchives.push(entry);
    void this.deps.spill.spill(entry);
  }

  /**
   * Runs `read` against the pod holding the container's files: its own pod while it runs, a peek pod
   * (see peek.ts) while it was created and never started. An exited container has nothing to read:
   * in Kubernetes its filesystem went with its process.
   */
  private async withFiles<T>(c: ContainerRecord, read: (pod: string) => Promise<T>): Promise<T> {
    if (c.status === 'running' && c.podName && !this.deps.isReaper(c)) return read(c.podName);
    if (c.status === 'created' && !c.podName && !this.deps.isReaper(c)) {
      const lease = await this.deps.peeks.acquire(c.id, this.deps.peekSource(c));
      try {
        return await read(lease.pod);
      } finally {
        lease.release();
      }
    }
    if (c.status === 'exited') {
      throw conflict(
        `container ${c.name} has exited: berth cannot read its files, as a pod's filesystem is gone with its process (read them while it runs, or keep them in a named volume)`,
      );
    }
    throw conflict(
      `container ${c.name} is ${c.status === 'created' ? 'starting' : c.status}: berth reads files of a running container or of one not yet started`,
    );
  }

  /** HEAD archive. */
  async stat(c: ContainerRecord, path: string): Promise<PathStat> {
    const notThere = (): DockerError => notFound(`Could not find the file ${path} in container ${c.name}`);
    try {
      return await this.withFiles(c, async (pod) => {
        const r = await this.readInPod(pod, statArgv(path));
        const st = r.exitCode === 0 ? parseStatLines(r.stdout, path) : undefined;
        if (!st) throw notThere();
        return st;
      });
    } catch (err) {
      // `docker cp file c:/dst` asks HEAD first and copies on 404: copying into a created container of an
      // image without sleep must keep working, so a peek pod that cannot run answers as before.
      if (err instanceof PeekFailed) throw notThere();
      throw err;
    }
  }

  /**
   * GET archive in one exec: `open(stat)` is called once the stat is known and returns where the tar goes;
   * 404 (before anything is written) when the path does not exist. A stream lost midway runs the exec again and
   * goes on where the client's tar stopped (resumed-read.ts).
   */
  async read(c: ContainerRecord, path: string, open: (st: PathStat) => Writable): Promise<void> {
    await this.withFiles(c, async (pod) => {
      const passed = new StreamDigest();
      let out: Writable | undefined;
      const target = (st: PathStat): Writable => (out ??= open(st));
      await readAgainIfLost(() => this.tarOut(c, pod, path, target, new RunSink(passed)));
    });
  }

  /** One run of GET archive: the stat lines on stderr, then the tar on stdout. */
  private async tarOut(c: ContainerRecord, pod: string, path: string, open: (st: PathStat) => Writable, sink: RunSink): Promise<void> {
    let errText = '';
    let opened = false;
    const stderr = new Writable({
      write(chunk: Buffer, _enc, cb) {
        errText = (errText + chunk.toString('utf8')).slice(-65536);
        if (!opened) {
          const st = parseStatLines(errText, path);
          if (st) {
            opened = true;
            sink.attach(open(st));
          }
        }
        cb();
      },
    });
    // The stat lines were written before tar started; should stdout still overtake them, it waits in the sink.
    const { done } = await this.deps.cluster.exec(pod, SANDBOX_CONTAINER, tarArgv(path), { stdout: sink.stream, stderr });
    const { exitCode } = await done.finally(() => sink.ended());
    if (!opened) {
      if (exitCode !== 0) throw notFound(`Could not find the file ${path} in container ${c.name}`);
      throw new DockerError(500, `reading ${path} in container ${c.name} failed: ${errText.trim() || 'no stat from the container'}`);
    }
    sink.check(`${path} in container ${c.name}`);
    if (exitCode !== 0)
      process.stderr.write(`berth serve: tar of ${path} in ${c.name} exited ${exitCode}: ${errText.replace(/^berth-(stat|link) .*\n/gm, '').trim()}\n`);
  }
}

/**
 * Runs a command that only reads again when its stream was lost (a dropped connection to the API server): nothing
 * in the container changed. What a lost run already passed on is the caller's to skip (resumed-read.ts).
 */
async function readAgainIfLost<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof StreamLost) || n >= READ_ATTEMPTS) throw err;
    }
  }
}
