// `berth image-serve DIR`: run by berth in a pod, it serves the OCI image layout in DIR as a read-only registry
// over HTTPS, so the cluster's nodes pull a step's image from POD_IP:PORT by digest. The certificate is the one
// --cert names (berth issues it from the image CA the nodes trust, and sends it with the image), or else made at
// start and self-signed, for nodes that skip verification (a pull by digest is still checked by content).
import { readFileSync } from 'node:fs';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isIP, isIPv6 } from 'node:net';
import { Command } from 'commander';
import { serveImageLayout } from '../registry/layout-server.js';
import { selfSignedCertificate } from '../registry/self-signed.js';

/** berth's image pods pass --port themselves (runtime/image-pod.ts); the same number, for a server started by hand. */
const DEFAULT_PORT = 5443;
const NAME = 'berth image-serve';
const CLOCK_SKEW_MS = 5 * 60 * 1000;
const VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;

export function imageServeCommand(): Command {
  return new Command('image-serve')
    .description(
      "serve the OCI image layout in DIR as a read-only registry over HTTPS, with the certificate --cert names (issued by berth's image CA) or a self-signed one made at start: run by berth itself in the image pods of --image-server (berth serve, berth task plan run), seldom by hand",
    )
    .argument('<dir>', 'an OCI image layout folder (oci-layout, index.json, blobs/sha256)')
    .option('--port <n>', 'port to listen on', String(DEFAULT_PORT))
    .option('--listen <address>', "address to listen on (default: every address of the pod's own network namespace, IPv6 and IPv4)")
    .option('--cert <file>', 'the certificate to present, PEM (with --key; default: a self-signed one made at start)')
    .option('--key <file>', "the certificate's private key, PEM")
    .action(async (dir: string, o: { port: string; listen?: string; cert?: string; key?: string }) => {
      try {
        await serve(dir, o.listen, portOf(o.port), certificateOf(o));
      } catch (err) {
        process.stderr.write(`${NAME}: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}

/** The certificate given (--cert and --key, both or neither), or a self-signed one for this pod's addresses. */
function certificateOf(o: { cert?: string; key?: string }): { cert: string; key: string } {
  if (o.cert !== undefined || o.key !== undefined) {
    if (o.cert === undefined || o.key === undefined) throw new Error('--cert and --key go together: give both, or neither for a self-signed certificate');
    const read = (file: string, what: string): string => {
      try {
        return readFileSync(file, 'utf8');
      } catch (err) {
        throw new Error(`cannot read the ${what} ${file}: ${(err as Error).message}`, { cause: err });
      }
    };
    return { cert: read(o.cert, 'certificate'), key: read(o.key, 'key') };
  }
  const now = Date.now();
  return selfSignedCertificate({
    commonName: 'berth-image-server',
    ipAddresses: podAddresses(networkInterfaces(), process.env.POD_IP),
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + VALIDITY_MS),
  });
}

async function serve(dir: string, listen: string | undefined, port: number, { cert, key }: { cert: string; key: string }): Promise<void> {
  const server = await serveImageLayout({
    dir,
    ...(listen ? { host: listen } : {}),
    port,
    cert,
    key,
    log: (line) => process.stderr.write(`${NAME}: ${line}\n`),
  });
  const host = listen === undefined ? '*' : isIPv6(listen) ? `[${listen}]` : listen;
  process.stdout.write(`${NAME}: serving ${server.manifests[0].digest} from ${dir} on https://${host}:${server.port}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

function portOf(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new Error(`--port ${text}: give a port number (0-65535)`);
  return port;
}

/** The addresses a node may reach this pod at: its interfaces' but loopback, and $POD_IP, each once. */
export function podAddresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, podIp: string | undefined): string[] {
  const found = Object.values(interfaces)
    .flatMap((infos) => infos ?? [])
    .filter((info) => !info.internal)
    .map((info) => info.address);
  const fromEnv = podIp?.trim() ? [podIp.trim()] : [];
  if (fromEnv.length && !isIP(fromEnv[0])) throw new Error(`$POD_IP ${JSON.stringify(podIp)} is not an IP address`);
  return [...new Set([...fromEnv, ...found])];
}
