// `berth serve`: a Docker Engine API whose containers are pods (see docs/serve.md).
import type { ProbeResult } from '../runtime/image-probe.js';
import { podOutlet, registryOutlet, type ImageOutlet, type PodOutletOptions } from '../dockerapi/images/image-outlet.js';
import { certificateIssuer } from '../registry/image-ca.js';
import { IMAGE_SERVER_CA_HELP, imageServerCaOf } from './image-server-ca.js';
import { helperImageOf } from '../runtime/plan.js';
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import type { KubeConfig } from '@kubernetes/client-node';
import { connect } from '../kube/connect.js';
import { ClusterClient } from '../kube/client.js';
import { Engine } from '../dockerapi/engine.js';
import { ImageConfigSource } from '../dockerapi/images/image-config.js';
import { resolvePortMode } from '../dockerapi/networks/port-proxy.js';
import { dockerRoutes } from '../dockerapi/routes.js';
import { SERVE_HINTS, withFaceHints } from '../dockerapi/face-hints.js';
import { CAPABILITIES_ENV, CAPABILITIES_FLAG, DOCKER_DEFAULT_CAPABILITIES, parseAllowedCapabilities } from '../dockerapi/containers/capabilities.js';
import { BERTH_VERSION } from './version.js';
import { checkListenerSecurity, parseListener, serveDockerApi } from '../dockerapi/http/server.js';
import { loadListenerTls } from '../dockerapi/http/tls-options.js';
import { MIN_TOKEN_LENGTH, TOKEN_ENV, resolveToken } from '../dockerapi/http/token.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../dockerapi/http/body-timeout.js';
import { parsePushTarget, type PushTarget } from '../registry/push-target.js';
import { DEFAULT_MIN_API_VERSION, MIN_API_VERSION_ENV, OLDEST_API_VERSION, parseMinApiVersion } from '../dockerapi/http/api-version.js';
import { SETTINGS_PREFIX, podSettingsFrom } from '../runtime/sandbox-settings.js';
import { checkOneContainer, loadPodTemplate } from '../runtime/pod-template.js';
import { INHERIT_ENV, inheritRequested, readInheritedSettings, withInherited } from '../runtime/inherit-pod.js';
import { LeaseLock } from '../kube/lease-lock.js';
import { ANNOTATION_EXPIRES_AT, ownershipLabels } from '../runtime/pod-rules.js';

/** What a user of berth serve gets on a cluster without split log streams (a stock one). */
const MERGED_LOGS_NOTE =
  "this cluster serves a container's log with stdout and stderr merged (its feature gate PodLogsQuerySplitStreams is off): docker logs, docker run and attach give both as stdout";

// Flags that set a pod setting for every container: each is the default of the label `berth.dev/<flag>`.
const SETTING_FLAGS: Array<[flag: string, key: string, help: string]> = [
  ['request-cpu', 'request-cpu', 'CPU request of every pod (e.g. 100m)'],
  ['request-memory', 'request-memory', 'memory request of every pod (e.g. 128Mi)'],
  ['request-ephemeral-storage', 'request-ephemeral-storage', 'ephemeral-storage request of every pod'],
  ['limit-cpu', 'limit-cpu', 'CPU limit of every pod (HostConfig NanoCpus wins)'],
  ['limit-memory', 'limit-memory', 'memory limit of every pod (HostConfig Memory wins)'],
  ['limit-ephemeral-storage', 'limit-ephemeral-storage', 'ephemeral-storage limit of every pod'],
  ['node-selector', 'node-selector', 'node selector of every pod, k=v,k=v'],
  ['service-account', 'service-account', 'service account of every pod (its token is not mounted)'],
  ['pull-policy', 'pull-policy', 'image pull policy: Always, IfNotPresent (default) or Never'],
  ['pod-name-prefix', 'name-prefix', 'prefix of every pod name'],
  ['pod-labels', 'pod-labels', 'extra labels of every pod, k=v,k=v'],
  ['pod-annotations', 'pod-annotations', 'extra annotations of every pod, k=v,k=v'],
];

async function takeLock(kc: KubeConfig, namespace: string, owner: string, lease: string | true, timeoutSeconds: number): Promise<LeaseLock> {
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) throw new Error(`--lock-timeout ${timeoutSeconds}: give seconds (0 or more)`);
  const name =
    lease === true
      ? `berth-serve-${owner
          .toLowerCase()
          .replace(/[^a-z0-9-]+/g, '-')
          .replace(/^-+|-+$/g, '')}`
          .slice(0, 63)
          .replace(/-+$/, '')
      : lease;
  const lock = new LeaseLock(kc, namespace, { name, durationSeconds: 15, labels: ownershipLabels(owner), expiryAnnotation: ANNOTATION_EXPIRES_AT });
  await lock.acquire(timeoutSeconds * 1000, (h) =>
    process.stderr.write(`berth serve: waiting for the Lease ${name}, held by ${h.holder} (lapses ${h.expiresAt?.toISOString() ?? '?'} unless renewed)\n`),
  );
  process.stderr.write(`berth serve: holding the Lease ${name} as ${lock.identity}\n`);
  return lock;
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

export function serveCommand(): Command {
  const cmd = new Command('serve')
    .description('serve a Docker Engine API (docker CLI, testcontainers, dockerode) whose containers run as pods')
    .option('-H, --host <listener...>', 'listen on unix:///path or tcp://host:port, repeatable (default: unix:///var/run/berth.sock and tcp://127.0.0.1:2475)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', "namespace (default: the context's)")
    .option('--instance <id>', 'owner label of everything this berth creates (default: random)')
    .option(
      '--token <token>',
      `require \`Authorization: Bearer <token>\` (a non-loopback tcp listener needs this or --tlsverify); at least ${MIN_TOKEN_LENGTH} characters; visible in ps: prefer --token-file or $${TOKEN_ENV}`,
    )
    .option('--token-file <file>', `read the token from this file (one line), instead of --token or $${TOKEN_ENV}`)
    .option(
      '--body-timeout <seconds>',
      'a request body that stalls this long (JSON: is not whole by then) is answered 408',
      String(DEFAULT_BODY_TIMEOUT_MS / 1000),
    )
    .option('--tls', 'tcp listeners speak TLS (--tlscert, --tlskey); clients are not verified')
    .option('--tlsverify', 'TLS and require client certificates signed by --tlscacert (implies --tls)')
    .option('--tlscacert <file>', 'CA that signs client certificates (default: ca.pem in $DOCKER_CERT_PATH or ~/.docker)')
    .option('--tlscert <file>', 'server certificate (default: cert.pem in $DOCKER_CERT_PATH or ~/.docker)')
    .option('--tlskey <file>', 'server private key (default: key.pem in $DOCKER_CERT_PATH or ~/.docker)')
    .option('--ttl <seconds>', 'expiry and activeDeadlineSeconds of created objects', '3600')
    .option('--start-timeout <seconds>', 'how long a container may take to start', '120')
    .option('--publish-address <ip>', 'address published ports listen on', '127.0.0.1')
    .option('--port-mode <mode>', 'how published ports reach pods: forward (port-forward), direct (pod IP) or auto (direct when berth runs in a pod)', 'auto')
    .option(
      '--pod-template <file|name>',
      "lay every pod on this template: a Pod or PodTemplate YAML file, or a PodTemplate object in the namespace (a container's label berth.dev/pod-template names its own)",
    )
    .option('--inherit-pod-settings', `pods take the node selector, tolerations and image pull secrets of the pod berth runs in (default: $${INHERIT_ENV})`)
    .option(
      '--allow-privileged',
      'accept Privileged containers, CapAdd beyond --capabilities, NetworkMode=host and IpcMode=host (hostNetwork, hostIPC) (all refused by default)',
    )
    .option(
      `${CAPABILITIES_FLAG} <list>`,
      `the capabilities every container gets and CapAdd may ask for: a comma-separated subset of Docker's default set, or none (default: $${CAPABILITIES_ENV}, else Docker's set: ${DOCKER_DEFAULT_CAPABILITIES.join(',')})`,
    )
    .option(
      '--insecure-registry <host:port...>',
      "speak plain http to this registry: image configs, and a build's base images (repeatable; loopback registries always are)",
      [],
    )
    .option(
      '--helper-image <image>',
      'an image with sh and tar that delivers files copied before start into a container whose command berth does not know (default: $BERTH_HELPER_IMAGE, else docker.io/library/busybox:1.36)',
    )
    .option(
      '--image-registry <registry/prefix>',
      "where docker build and docker commit push the images they make (by digest, deleted when removed or when berth stops), for the cluster's nodes to pull; http://REGISTRY/PREFIX for a plain-http registry",
    )
    .option(
      '--image-server <image>',
      "instead of a registry: serve each image docker build and docker commit make from a pod of IMAGE (the berth image, which runs `berth image-serve`), pulled by the nodes over HTTPS on the pod network, trusting --image-server-ca or without verifying the pod's certificate (containerd: _default/hosts.toml with skip_verify); at start berth serve checks that a node can and says so (default: $BERTH_IMAGE_SERVER)",
    )
    .option('--image-server-ca <dir>', `${IMAGE_SERVER_CA_HELP} (default: $BERTH_IMAGE_SERVER_CA)`)
    .option(
      '--builder-image <image>',
      'the image docker build runs in a privileged pod: buildah and berth-build (default: $BERTH_BUILDER_IMAGE; scripts/build-images.sh builds localhost/berth/builder:1)',
    )
    .option(
      '--min-api-version <version>',
      `the oldest Docker API version served; older clients are refused as dockerd refuses them (default: $${MIN_API_VERSION_ENV}, else ${DEFAULT_MIN_API_VERSION} as dockerd 29; down to ${OLDEST_API_VERSION})`,
    )
    .option('--no-image-config', 'do not read image configs (ExposedPorts, Healthcheck, User, …) from registries')
    .option('--lock [lease]', 'hold a Lease (default name berth-serve-<instance>) while serving; wait while another berth holds it')
    .option('--lock-timeout <seconds>', 'how long --lock waits for the Lease before giving up', '300')
    .option('--prune-start', 'first delete what an earlier berth serve with the same --instance left behind')
    .option('--keep-failed <minutes>', 'keep the pod of a container that failed this long after rm, the reaper or shutdown', '0');
  for (const [flag, key, help] of SETTING_FLAGS) cmd.option(`--${flag} <value>`, `${help} (a container's label ${SETTINGS_PREFIX}${key} wins)`);
  return cmd.action(async (o) => {
    const podDefaults: Record<string, string> = {};
    for (const [flag, key] of SETTING_FLAGS) {
      const value = o[camel(flag)] as string | undefined;
      if (value !== undefined) podDefaults[`${SETTINGS_PREFIX}${key}`] = value;
    }
    podSettingsFrom(podDefaults); // a bad flag stops here, not at the first container
    const capabilitiesSetting =
      o.capabilities !== undefined
        ? { value: o.capabilities as string, source: CAPABILITIES_FLAG }
        : process.env[CAPABILITIES_ENV]?.trim()
          ? { value: process.env[CAPABILITIES_ENV], source: `$${CAPABILITIES_ENV}` }
          : undefined;
    const capabilities = capabilitiesSetting ? parseAllowedCapabilities(capabilitiesSetting.value, capabilitiesSetting.source) : undefined;
    const keepFailedMinutes = Number(o.keepFailed);
    if (!Number.isFinite(keepFailedMinutes) || keepFailedMinutes < 0) throw new Error(`--keep-failed ${o.keepFailed}: give minutes (0 or more)`);
    const hosts: string[] = o.host?.length ? o.host : ['unix:///var/run/berth.sock', 'tcp://127.0.0.1:2475'];
    const tls = loadListenerTls(o);
    const listeners = hosts.map((h) => parseListener(h, { tls: Boolean(tls) }));
    const token = resolveToken({ token: o.token as string | undefined, tokenFile: o.tokenFile as string | undefined });
    const bodyTimeoutSeconds = Number(o.bodyTimeout);
    if (!Number.isFinite(bodyTimeoutSeconds) || bodyTimeoutSeconds <= 0) throw new Error(`--body-timeout ${o.bodyTimeout}: give seconds (more than 0)`);
    const minApiVersion = minApiVersionOf(o.minApiVersion as string | undefined);
    const imageRegistry = o.imageRegistry ? parsePushTarget(o.imageRegistry as string, '--image-registry') : undefined;
    // a flag wins over $BERTH_IMAGE_SERVER, as over every variable
    const imageServer = (o.imageServer as string | undefined) ?? (o.imageRegistry ? undefined : process.env.BERTH_IMAGE_SERVER || undefined);
    if (imageRegistry && imageServer) throw new Error('--image-registry and --image-server are two places for the images berth makes: give one');
    const imageCa = imageServerCaOf({ imageServerCa: o.imageServerCa as string | undefined }, process.env, imageServer, 'BERTH_IMAGE_SERVER_CA');
    await checkListenerSecurity(listeners, { tls, token });
    const { client, source } = connect({ kubeconfig: o.kubeconfig, context: o.context, namespace: o.namespace });
    const { kc, namespace } = client;
    const portMode = resolvePortMode(o.portMode as string, source);
    const owner = (o.instance as string | undefined) ?? `serve-${randomBytes(4).toString('hex')}`;
    const cluster = withFaceHints(client, SERVE_HINTS);
    let podTemplate = o.podTemplate ? await loadPodTemplate(o.podTemplate as string, (n) => cluster.readPodTemplate(n), '--pod-template') : undefined;
    if (o.inheritPodSettings || inheritRequested(process.env)) {
      const inherited = await readInheritedSettings((ns, name) => new ClusterClient(kc, ns).readPod(name), namespace, process.env);
      for (const note of inherited.notes) process.stderr.write(`berth serve: ${note}\n`);
      process.stderr.write(`berth serve: pods inherit the node selector, tolerations and image pull secrets of ${inherited.origin}\n`);
      podTemplate = withInherited(podTemplate, inherited);
    }
    if (podTemplate) checkOneContainer(podTemplate); // unfit templates stop here, not at the first container
    const imageOutlet = imageOutletOf(imageRegistry, imageServer, {
      cluster: client,
      owner,
      ttlSeconds: Number(o.ttl),
      startTimeoutSeconds: Number(o.startTimeout),
      helperImage: helperImageOf((o.helperImage as string | undefined) ?? process.env.BERTH_HELPER_IMAGE),
      ...(podTemplate ? { template: podTemplate } : {}),
      ...(imageCa ? { certificate: certificateIssuer(imageCa, Number(o.ttl)) } : {}),
    });
    const engine = new Engine({
      cluster,
      podTemplate,
      owner,
      ttlSeconds: Number(o.ttl),
      publishAddress: o.publishAddress,
      startTimeoutMs: Number(o.startTimeout) * 1000,
      portMode,
      allowPrivileged: Boolean(o.allowPrivileged),
      capabilities,
      podDefaults,
      keepFailedSeconds: keepFailedMinutes * 60,
      helperImage: (o.helperImage as string | undefined) ?? process.env.BERTH_HELPER_IMAGE,
      ...(imageOutlet ? { imageOutlet } : {}),
      builderImage: (o.builderImage as string | undefined) ?? process.env.BERTH_BUILDER_IMAGE,
      insecureRegistries: o.insecureRegistry as string[],
      imageConfigs: o.imageConfig
        ? new ImageConfigSource({ insecure: o.insecureRegistry as string[], log: (l) => process.stderr.write(`berth serve: ${l}\n`) })
        : undefined,
    });
    const lock = o.lock ? await takeLock(kc, namespace, owner, o.lock, Number(o.lockTimeout)) : undefined;
    if (o.pruneStart) await engine.pruneCluster();
    else {
      const recovered = await engine.recover();
      if (recovered) process.stderr.write(`berth serve: took over ${recovered} container(s) of instance ${owner}\n`);
    }
    engine.startWatch();
    const tlsNote = tls ? (tls.verifyClients ? ' (tcp: TLS, client certificates required)' : ' (tcp: TLS)') : '';
    const server = await serveDockerApi({
      listeners,
      router: dockerRoutes(engine, { version: BERTH_VERSION, minApiVersion }),
      minApiVersion,
      token,
      tls,
      bodyTimeoutMs: bodyTimeoutSeconds * 1000,
      log: (l) => process.stderr.write(`berth serve: ${l}\n`),
    });
    process.stderr.write(`berth serve: instance ${owner}, namespace ${namespace}, listening on ${server.addresses.join(', ')}${tlsNote}\n`);
    // said once, where a user starting it looks: on such a cluster a script's stderr would otherwise pass as stdout
    // unnoticed. Not awaited: the signal handlers below must not wait on the cluster's answer.
    void cluster.servesSplitLogs().then((split) => split || process.stderr.write(`berth serve: ${MERGED_LOGS_NOTE}\n`));
    // --image-server: whether the nodes pull from image pods is asked once, as the API already serves (a pod start);
    // a stop waits for it, so that its pods are gone before the instance's cleanup looks
    const imageCheck = imageServer && imageOutlet ? sayWhetherNodesPull(imageOutlet, imageServer) : undefined;
    let stopping = false;
    const stop = async (): Promise<void> => {
      if (stopping) return;
      stopping = true;
      process.stderr.write('berth serve: stopping, deleting what this instance created\n');
      await server.close();
      await imageCheck;
      await engine.shutdown();
      await lock?.release();
      process.exit(0);
    };
    // Another berth now manages this instance's objects: leave them to it, delete nothing.
    lock?.keepRenewing((reason) => {
      process.stderr.write(`berth serve: ${reason}; stopping without deleting anything (the new holder manages instance ${owner})\n`);
      stopping = true;
      void server.close().then(() => process.exit(1));
    });
    process.on('SIGTERM', () => void stop());
    process.on('SIGINT', () => void stop());
  });
}

/** `--min-api-version`, else dockerd's $DOCKER_MIN_API_VERSION, else dockerd 29's default. */
function minApiVersionOf(flag: string | undefined): string {
  if (flag !== undefined) return parseMinApiVersion(flag, '--min-api-version');
  const env = process.env[MIN_API_VERSION_ENV]?.trim();
  return env ? parseMinApiVersion(env, `$${MIN_API_VERSION_ENV}`) : DEFAULT_MIN_API_VERSION;
}

/** Where docker build and docker commit put their images: the registry given, a pod of the server image, or nowhere. */
function imageOutletOf(registry: PushTarget | undefined, serverImage: string | undefined, o: Omit<PodOutletOptions, 'serverImage'>): ImageOutlet | undefined {
  if (registry) return registryOutlet(registry, o.ttlSeconds);
  return serverImage ? podOutlet({ ...o, serverImage }) : undefined;
}

/** Said once at the start of a berth serve with --image-server: whether its nodes pull what it serves from pods. */
async function sayWhetherNodesPull(outlet: ImageOutlet, serverImage: string): Promise<void> {
  const probe = await outlet
    .check?.()
    .catch((err: Error): ProbeResult => ({ pulled: false, why: `could not check that the nodes pull images served from pods: ${err.message}` }));
  if (!probe) return;
  process.stderr.write(
    `berth serve: ${probe.pulled ? `images built and committed here are served from pods of ${serverImage}: node ${probe.node} pulled one` : probe.why}\n`,
  );
}
