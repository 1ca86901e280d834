/** Exec: commands in a running container through pods/exec; records kept as dockerd keeps them (containers/exec-records.ts). */
import { PassThrough } from 'node:stream';
import { badRequest, conflict, notFound, type Call, type Router } from '../http/http.js';
import { checkBody } from '../http/request-bodies.js';
import { STDERR, STDOUT } from '../http/framing.js';
import { framedWriter } from '../logs/framed-writer.js';
import type { ExecRecord } from '../containers/exec-records.js';
import type { ContainerRecord } from '../model.js';
import type { Engine } from '../engine.js';
import { streamType } from './container-streams.js';
import { execUserIsContainers, execUserRefusal } from '../containers/exec-user.js';

interface ExecCreateBody {
  Cmd?: string[] | string | null;
  Env?: string[] | null;
  WorkingDir?: string;
  User?: string;
  Privileged?: boolean;
  Tty?: boolean;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
}

export function execRoutes(r: Router, engine: Engine): void {
  r.op('ContainerExec', 'POST', '/containers/{id}/exec', async (call, [id]) => {
    const c = engine.container(id);
    const body = checkBody<ExecCreateBody>('exec', await call.json(false));
    const cmd = Array.isArray(body.Cmd) ? body.Cmd : body.Cmd ? [body.Cmd] : [];
    if (cmd.length === 0) throw badRequest('No exec command specified');
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    if (!execUserIsContainers(body.User ?? '', c.body.User ?? '')) throw badRequest(execUserRefusal(body.User ?? '', c.body.User ?? ''));
    // dockerd gives a privileged exec every capability; a Kubernetes exec has the container's, so it runs with
    // more only in a privileged container (which has them all already)
    if (body.Privileged && !c.body.HostConfig?.Privileged) {
      throw badRequest(
        "exec --privileged is not possible: a Kubernetes exec runs with the container's own capabilities and cannot be given more; run the container with --privileged (on a berth serve started with --allow-privileged), or exec without --privileged",
      );
    }
    const rec = engine.execs.create({
      containerId: c.id,
      cmd,
      env: body.Env ?? [],
      workingDir: body.WorkingDir ?? '',
      user: body.User ?? '',
      tty: Boolean(body.Tty),
      attachStdin: Boolean(body.AttachStdin),
      attachStdout: Boolean(body.AttachStdout) || !body.AttachStderr,
      attachStderr: Boolean(body.AttachStderr),
    });
    call.send(201, { Id: rec.id });
  });
  r.op('ExecStart', 'POST', '/exec/{id}/start', async (call, [id]) => {
    const rec = findExec(engine, id);
    const body = checkBody<{ Detach?: boolean; Tty?: boolean }>('execStart', (await call.json()) ?? {});
    const c = engine.container(rec.containerId);
    if (c.status !== 'running') throw conflict(`Container ${c.id} is not running`);
    if (rec.running || rec.exitCode !== null) throw conflict(`exec ${id} has already been started`);
    engine.execs.started(rec);
    if (body.Detach) {
      call.send(200);
      void engine
        .execStream(c, execArgv(rec), { stdout: new PassThrough().resume(), stderr: new PassThrough().resume(), tty: rec.tty })
        .catch(() => 126)
        .then((code) => engine.execs.ended(rec, code));
      return;
    }
    await runAttached(engine, call, c, rec, rec.tty || Boolean(body.Tty));
  });
  r.op('ExecInspect', 'GET', '/exec/{id}/json', (call, [id]) => {
    const rec = findExec(engine, id);
    call.send(200, {
      ID: rec.id,
      ContainerID: rec.containerId,
      Running: rec.running,
      ExitCode: rec.exitCode,
      Pid: 0,
      OpenStdin: rec.attachStdin,
      OpenStdout: rec.attachStdout,
      OpenStderr: rec.attachStderr,
      CanRemove: false,
      DetachKeys: '',
      ProcessConfig: { entrypoint: rec.cmd[0], arguments: rec.cmd.slice(1), tty: rec.tty, user: rec.user, privileged: false },
    });
  });
  r.op('ExecResize', 'POST', '/exec/{id}/resize', (call, [id]) => {
    findExec(engine, id);
    call.int('h');
    call.int('w');
    call.send(200);
  });
}

function findExec(engine: Engine, id: string): ExecRecord {
  const rec = engine.execs.get(id);
  if (!rec) throw notFound(`No such exec instance: ${id}`);
  return rec;
}

/** The exec's output on the hijacked connection (frames unless a TTY), its stdin from it. */
async function runAttached(engine: Engine, call: Call, c: ContainerRecord, rec: ExecRecord, tty: boolean): Promise<void> {
  const stream = call.openStream(streamType(call, tty));
  const stdout = rec.attachStdout ? framedWriter(stream.out, STDOUT, tty) : new PassThrough().resume();
  const stderr = rec.attachStderr ? framedWriter(stream.out, tty ? STDOUT : STDERR, tty) : new PassThrough().resume();
  let code = 126;
  try {
    code = await engine.execStream(c, execArgv(rec), { stdin: rec.attachStdin ? stream.input : undefined, stdout, stderr, tty });
  } catch (err) {
    stderr.write(Buffer.from(`berth: exec failed: ${(err as Error).message}\n`));
  } finally {
    engine.execs.ended(rec, code);
    await new Promise<void>((resolve) => stdout.end(() => stderr.end(() => resolve())));
    stream.end();
  }
}

/**
 * Env by `env`, WorkingDir by `sh -c 'cd …'`: a Kubernetes exec has neither. A bare `KEY` (the CLI's `-e KEY`
 * with KEY unset where it runs) unsets KEY, as dockerd's ReplaceOrAppendEnvValues does.
 */
export function execArgv(rec: Pick<ExecRecord, 'cmd' | 'env' | 'workingDir'>): string[] {
  let argv = rec.cmd;
  if (rec.env.length) {
    const unset = rec.env.filter((e) => !e.includes('=')).flatMap((key) => ['-u', key]);
    argv = ['env', ...unset, ...rec.env.filter((e) => e.includes('=')), ...argv];
  }
  if (rec.workingDir) argv = ['/bin/sh', '-c', 'cd "$0" && exec "$@"', rec.workingDir, ...argv];
  return argv;
}
