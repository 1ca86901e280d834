/** Images: pulls are records (the kubelet pulls when a pod starts), with the config the registry gives. */
import { badRequest, type Call, type Router } from '../http/http.js';
import { compareVersions } from '../http/api-version.js';
import { checkKeys, parseFilters, type Filters } from '../filters/filters.js';
import { imageListFilter } from '../filters/image-filters.js';
import { imageListItem, inspectImage } from '../images/image-view.js';
import type { Engine } from '../engine.js';
import { imageId } from '../model.js';
import { goArch } from './system.js';
import { normalizeImage } from '../images/image-ref.js';
import { parseBuildRequest } from '../images/build-request.js';
import { BuildStream } from '../images/build-stream.js';
import { DEFAULT_MAX_ARCHIVE_BYTES, sanitizeArchive } from '../../runtime/files.js';

export function imageRoutes(r: Router, engine: Engine): void {
  r.op('ImageCreate', 'POST', '/images/create', (call) => pull(engine, call));
  r.op('ImageList', 'GET', '/images/json', (call) => {
    const listing = imageListFilter(listFilters(call), (ref) => engine.images.find(ref));
    const users = containersByImage(engine);
    call.send(
      200,
      [...engine.images.values()].filter(listing.includes).map((i) => imageListItem(i, call.version, users.get(i.id) ?? 0, listing.references(i))),
    );
  });
  r.op('ImageInspect', 'GET', /^\/images\/(.+)\/json$/, (call, [name]) => call.send(200, inspectImage(engine.images.find(name), goArch(), call.version)));
  // the body (a config to merge) is not read: a pod's image config comes from the container and --change
  r.op('ImageCommit', 'POST', '/commit', async (call) => {
    const container = call.query.get('container');
    if (!container) throw badRequest('container is required: give the container to commit (?container=NAME)');
    const q = (k: string): string | undefined => call.query.get(k) || undefined;
    const id = await engine.commit(container, {
      repo: q('repo'),
      tag: q('tag'),
      comment: q('comment'),
      author: q('author'),
      changes: call.query.getAll('changes'),
    });
    call.send(201, { Id: id });
  });
  r.op('ImageBuild', 'POST', '/build', (call) => build(engine, call));
  r.op('ImageTag', 'POST', /^\/images\/(.+)\/tag$/, (call, [name]) => {
    const repo = call.query.get('repo');
    engine.images.find(name);
    if (!repo) throw badRequest('repo is required');
    engine.images.tag(name, repo, call.query.get('tag') || 'latest');
    call.send(201);
  });
  r.op('ImageDelete', 'DELETE', /^\/images\/(.+)$/, (call, [name]) => call.send(200, engine.images.remove(name)));
  r.op('ImagePrune', 'POST', '/images/prune', (call) => {
    // Nothing is pruned (an image is a record of a pull; the node's images are the kubelet's), but what dockerd refuses is refused
    checkKeys(parseFilters(call.query.get('filters')), ['dangling', 'label', 'label!', 'until']);
    call.send(200, { ImagesDeleted: [], SpaceReclaimed: 0 });
  });
}

/** How many containers each image id has (its list item's Containers). */
function containersByImage(engine: Engine): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of engine.containers.values()) counts.set(imageId(c.image), (counts.get(imageId(c.image)) ?? 0) + 1);
  return counts;
}

/** The list's filters; a client of API 1.24 sends `docker images busybox` as `filter`, which dockerd takes as a reference pattern. */
function listFilters(call: Call): Filters {
  const filters = parseFilters(call.query.get('filters'));
  const legacy = call.query.get('filter');
  if (legacy && compareVersions(call.version, '1.25') < 0 && !filters.has('reference')) filters.set('reference', [legacy]);
  return filters;
}

/** `docker pull`: recorded, its config read from the registry; progress as JSON lines. */
async function pull(engine: Engine, call: Call): Promise<void> {
  const from = call.query.get('fromImage');
  if (!from) throw badRequest('fromImage is required (berth cannot import images)');
  const tag = call.query.get('tag');
  const tagged = from.includes('@') || /:[^/]*$/.test(from);
  // dockerd pulls every tag of a repository given neither a tag nor a digest (`docker pull --all-tags`)
  if (!tag && !tagged)
    throw badRequest(
      `pulling every tag of ${from} (a pull without a tag, as docker pull --all-tags sends it) is not supported by berth serve: it records one image for the kubelet to pull; name the tag (docker pull ${from}:<tag>)`,
    );
  const ref = tag && !tagged ? `${from}${tag.startsWith('sha256:') ? '@' : ':'}${tag}` : from;
  normalizeImage(ref); // a 400 before the stream starts
  const out = call.startChunked('application/json');
  out.write(`${JSON.stringify({ status: `Pulling from ${ref.replace(/:[^/:]*$/, '')}`, id: ref.split(':').pop() })}\n`);
  const known = isKnown(engine, ref);
  // the config first: the pull event carries the image's labels, as dockerd's (it comes when the pull is done)
  const found = await engine.images.readConfig(engine.images.remember(ref), true);
  engine.images.pull(ref);
  if (found && 'info' in found) out.write(`${JSON.stringify({ status: `Digest: ${found.info.repoDigest.split('@')[1]}` })}\n`);
  const config = !found ? '' : 'info' in found ? ' with its config from the registry' : ` (its config was not read: ${found.reason})`;
  out.write(`${JSON.stringify({ status: `berth: recorded ${ref}${config}; the cluster's kubelet pulls it when a container starts` })}\n`);
  // dockerd's last line, which clients read as the pull's success (docker-java fails a pull whose last status is another)
  out.write(`${JSON.stringify({ status: known ? `Status: Image is up to date for ${ref}` : `Status: Downloaded newer image for ${ref}` })}\n`);
  out.end();
}

/**
 * `docker build`: a request dockerd would refuse is a 400 before the stream; after it, the build's output and its end
 * (images/build-stream.ts). Any failure, a berth serve without a builder included, is the stream's last message, as
 * dockerd reports a failed build: clients (dockerode, testcontainers) read the stream to its end and fail with it.
 */
async function build(engine: Engine, call: Call): Promise<void> {
  const req = parseBuildRequest(call.query);
  // the context as the archive of a copy into the builder: bounded, names checked; read while it arrives
  const context = sanitizeArchive(call.body(), '/context', DEFAULT_MAX_ARCHIVE_BYTES).then((r) => r.tar);
  context.catch(() => undefined);
  const out = call.startChunked('application/json');
  const stream = new BuildStream(out, req.quiet);
  const gone = new AbortController();
  void call.clientGone().then(() => gone.abort());
  try {
    stream.succeeded(await engine.build(req, context, stream, gone.signal), req.tags);
  } catch (err) {
    // the client finishes sending its context before it reads the answer's end
    await context.catch(() => undefined);
    stream.failed((err as Error).message);
  }
  out.end();
}

function isKnown(engine: Engine, ref: string): boolean {
  try {
    engine.images.find(ref);
    return true;
  } catch {
    return false;
  }
}
