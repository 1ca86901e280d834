/**
 * The docker commands the shim answers without a cluster (`version`, `--help`, `image inspect|pull|ls`), in a
 * module that loads nothing else: kustomize and kpt start a `docker` process for each of these questions.
 */
import type { Writable } from 'node:stream';
import type { DockerCommand } from './argv.js';
import { shimHelp } from './help.js';

/** What `docker version` reports: kpt requires ≥ 20.10.0 (for `--pull`). */
export const SHIM_DOCKER_VERSION = '28.0.0';

/** The exit code when `command` is answered here; undefined for `run` and `info`, which need the cluster. */
export function answerLocally(command: DockerCommand, stdout: Writable): number | undefined {
  switch (command.kind) {
    case 'help':
      stdout.write(shimHelp(command.command));
      return 0;
    case 'version':
      stdout.write(formatVersion(command.format));
      return 0;
    case 'image-inspect':
      // The cluster pulls images itself; whether a node has one cannot be asked through the API.
      // "Unknowable" answers as present, so kpt goes on to run (where --pull decides).
      stdout.write(
        command.format
          ? command.images.map(() => '\n').join('')
          : `${JSON.stringify(
              command.images.map((i) => ({ Id: '', RepoTags: [i] })),
              null,
              4,
            )}\n`,
      );
      return 0;
    case 'image-pull':
      // Nothing to do: the kubelet pulls when the pod starts, under the pod's imagePullPolicy.
      if (!command.quiet) stdout.write(`${command.image}: the cluster pulls the image when the pod starts\n`);
      return 0;
    case 'image-ls':
      // No tag list exists on a cluster; an empty answer makes kpt fall back to the tag it was given. A person
      // gets docker's header over the empty table, as docker prints it.
      if (!command.format && !command.quiet) stdout.write('REPOSITORY   TAG       IMAGE ID   CREATED   SIZE\n');
      return 0;
    default:
      return undefined;
  }
}

function formatVersion(format?: string): string {
  const data = { Client: { Version: SHIM_DOCKER_VERSION, ApiVersion: '1.48', Platform: { Name: 'berth' } }, Server: { Version: SHIM_DOCKER_VERSION } };
  if (!format) return `Client: berth (docker-compatible shim)\n Version:           ${SHIM_DOCKER_VERSION}\n API version:       1.48\n`;
  if (/^\s*\{\{\s*json\s+\.\s*\}\}\s*$/.test(format)) return `${JSON.stringify(data)}\n`;
  // Only field paths like {{.Client.Version}}: enough for kpt, honest about everything else.
  return `${format.replace(/\{\{\s*\.([A-Za-z.]+)\s*\}\}/g, (_m, p: string) => {
    let cur: unknown = data;
    for (const k of p.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
    return cur === undefined ? '' : String(cur);
  })}\n`;
}
