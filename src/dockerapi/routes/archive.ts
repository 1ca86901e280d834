/** Archives: files in and out of a container as tar (docker cp). */
import type { Writable } from 'node:stream';
import { sanitizeArchive, goFileMode, DEFAULT_MAX_ARCHIVE_BYTES } from '../../runtime/files.js';
import { badRequest, type Call, type Router } from '../http/http.js';
import type { Engine } from '../engine.js';

export function archiveRoutes(r: Router, engine: Engine): void {
  r.op('ContainerArchiveInfo', 'HEAD', '/containers/{id}/archive', async (call, [id]) => {
    const c = engine.container(id);
    const st = await engine.files.stat(c, requirePath(call));
    call.send(200, undefined, { 'X-Docker-Container-Path-Stat': statHeader(st) });
  });
  r.op('ContainerArchive', 'GET', '/containers/{id}/archive', async (call, [id]) => {
    const c = engine.container(id);
    let out: Writable | undefined;
    await engine.files.read(
      c,
      requirePath(call),
      (st) => (out = call.startChunked('application/x-tar', 200, { 'X-Docker-Container-Path-Stat': statHeader(st) })),
    );
    out?.end();
  });
  r.op('PutContainerArchive', 'PUT', '/containers/{id}/archive', async (call, [id]) => {
    engine.container(id);
    const path = requirePath(call);
    // Bounded before and after gzip inflation, and in time (a stalled upload is a 408). Handed on while it
    // arrives: the copy into a running container starts meanwhile and waits for the checked whole.
    const archive = sanitizeArchive(call.body(), path, DEFAULT_MAX_ARCHIVE_BYTES).then((r) => r.tar);
    archive.catch(() => undefined); // the copy awaits it; a copy refused before (the container gone) does not
    await engine.putArchive(id, path, archive);
    // An empty body: testcontainers-node feeds the response to Readable.from.
    call.send(200);
  });
}

function requirePath(call: Call): string {
  const path = call.query.get('path');
  if (!path) throw badRequest('path is required');
  if (!path.startsWith('/')) throw badRequest(`path ${path} must be absolute`);
  return path;
}

function statHeader(st: { name: string; size: number; mode: number; mtime: string; linkTarget: string }): string {
  return Buffer.from(JSON.stringify({ name: st.name, size: st.size, mode: goFileMode(st.mode), mtime: st.mtime, linkTarget: st.linkTarget })).toString(
    'base64',
  );
}
