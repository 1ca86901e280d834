/**
 * What `docker --help` and `docker run --help` print when `docker` is berth: docker's layout, with
 * berth's words for what differs (containers are pods; settings come from BERTH_* variables).
 */

export const SHIM_COMMANDS: ReadonlyArray<[string, string]> = [
  ['run', 'Create and run a new container from an image (as a pod in your cluster)'],
  ['version', 'Show the Docker version information'],
  ['info', 'Display system-wide information (the cluster berth uses)'],
  ['image', 'Manage images: inspect, pull, ls (the cluster pulls images itself)'],
  ['pull', 'Pull an image (a no-op: the kubelet pulls when the pod starts)'],
  ['images', 'List images (always empty: a cluster has no local image list)'],
];

export const RUN_FLAG_HELP: ReadonlyArray<[string, string]> = [
  ['-a, --attach list', 'Attach to STDIN, STDOUT or STDERR'],
  ['    --cpus string', "Number of CPUs (the pod's cpu limit)"],
  ['    --entrypoint string', 'Overwrite the default ENTRYPOINT of the image'],
  ['-e, --env list', 'Set environment variables'],
  ['-i, --interactive', 'Keep STDIN open (streamed to the pod, closed at its end)'],
  ['-l, --label list', 'Set meta data on a container (pod labels)'],
  ['-m, --memory string', "Memory limit (the pod's memory limit)"],
  ['    --mount mount', 'Attach a filesystem mount (copied into the pod; writes are not copied back)'],
  ['    --name string', 'Assign a name to the container (prefix of the pod name)'],
  ['    --network network', 'Connect a container to a network (none: a deny-all NetworkPolicy; host: the pod network)'],
  ['    --pull string', 'Pull image before running ("always", "missing", "never": the pod\'s imagePullPolicy)'],
  ['    --rm', 'Automatically remove the container when it exits (pods are always removed)'],
  ['    --security-opt list', 'Security Options (only no-new-privileges)'],
  ['-t, --tty', 'Allocate a pseudo-TTY'],
  ['-u, --user string', 'Username or UID (format: <name|uid>[:<group|gid>])'],
  ['-v, --volume list', 'Bind mount a volume (copied into the pod)'],
  ['-w, --workdir string', 'Working directory inside the container'],
];

const SETTINGS = `Where the pods run: KUBECONFIG or BERTH_KUBECONFIG, BERTH_CONTEXT, BERTH_NAMESPACE (kubectl's defaults
otherwise, also in a pod), and ~/.config/berth/config.yaml or BERTH_CONFIG. The identity needs the Role in
deploy/rbac/shim-role.yaml. BERTH_TRACE=1 prints where a run's time goes. Details: docs/shim.md.`;

export function shimHelp(command?: string): string {
  if (command === 'run' || command === 'container run') {
    const width = Math.max(...RUN_FLAG_HELP.map(([f]) => f.length)) + 2;
    return [
      'Usage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]',
      '',
      'Create and run a new container from an image: berth runs it as a pod in your Kubernetes cluster,',
      'with the same stdin, stdout, stderr and exit code (125 when berth or the cluster failed).',
      '',
      'Options:',
      ...RUN_FLAG_HELP.map(([f, d]) => `  ${f.padEnd(width)}${d}`),
      '',
      SETTINGS,
      '',
    ].join('\n');
  }
  if (command) {
    return `Usage:  docker ${command}\n\nberth answers "docker ${command}" as the docker CLI does, for what kustomize and kpt ask.\n\n${SETTINGS}\n`;
  }
  const width = Math.max(...SHIM_COMMANDS.map(([c]) => c.length)) + 4;
  return [
    'Usage:  docker [OPTIONS] COMMAND',
    '',
    "berth's docker shim: kustomize, kpt and scripts call it as docker; every container runs as a pod.",
    '',
    'Commands:',
    ...SHIM_COMMANDS.map(([c, d]) => `  ${c.padEnd(width)}${d}`),
    '',
    SETTINGS,
    '',
    "Run 'docker COMMAND --help' for more information on a command.",
    '',
  ].join('\n');
}
