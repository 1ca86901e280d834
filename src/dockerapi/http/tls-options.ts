/**
 * dockerd's TLS flags for `berth serve` (`--tls`, `--tlsverify`, `--tlscacert`, `--tlscert`, `--tlskey`)
 * turned into what the tcp listeners need. Every file is read and checked here, before anything
 * listens, so a wrong path stops berth with the flag named.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

export interface TlsFlags {
  tls?: boolean;
  tlsverify?: boolean;
  tlscacert?: string;
  tlscert?: string;
  tlskey?: string;
}

/** What an HTTPS listener is made of. */
export interface ListenerTls {
  cert: Buffer;
  key: Buffer;
  /** Set with verifyClients: the CA that must have signed every client certificate. */
  ca?: Buffer;
  /** `--tlsverify`: the handshake fails without a client certificate signed by `ca`. */
  verifyClients: boolean;
}

/** dockerd's default folder for ca.pem, cert.pem and key.pem: $DOCKER_CERT_PATH, else ~/.docker. */
export function defaultCertDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_CERT_PATH || join(homedir(), '.docker');
}

function readFlagFile(flag: string, path: string, what: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`--${flag} ${path}: cannot read it (${code}); give --${flag} <file> with ${what}`, { cause: err });
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(data.toString('latin1'))) {
    throw new Error(`--${flag} ${path}: not PEM (no -----BEGIN ...----- block); give --${flag} <file> with ${what}`);
  }
  return data;
}

/**
 * The TLS of the tcp listeners, or undefined when neither `--tls` nor `--tlsverify` is given.
 * As dockerd: `--tlsverify` implies `--tls`; files default to ca.pem, cert.pem, key.pem in
 * $DOCKER_CERT_PATH or ~/.docker. Throws, naming the flag and the path, for a file that is missing,
 * unreadable, not PEM, or a certificate that does not belong to its key.
 */
export function loadListenerTls(flags: TlsFlags, env: NodeJS.ProcessEnv = process.env): ListenerTls | undefined {
  const verifyClients = Boolean(flags.tlsverify);
  if (!flags.tls && !verifyClients) {
    const stray = (['tlscacert', 'tlscert', 'tlskey'] as const).filter((f) => flags[f] !== undefined);
    if (stray.length)
      throw new Error(`--${stray.join(', --')} given without --tls or --tlsverify: add --tlsverify (clients need a certificate) or --tls (encryption only)`);
    return undefined;
  }
  const dir = defaultCertDir(env);
  const certPath = flags.tlscert ?? join(dir, 'cert.pem');
  const keyPath = flags.tlskey ?? join(dir, 'key.pem');
  const cert = readFlagFile('tlscert', certPath, "this server's certificate (PEM)");
  const key = readFlagFile('tlskey', keyPath, "the private key of --tlscert's certificate (PEM)");
  // dockerd reads no CA when clients are not verified; neither do we.
  const caPath = verifyClients ? (flags.tlscacert ?? join(dir, 'ca.pem')) : undefined;
  const ca = caPath ? readFlagFile('tlscacert', caPath, 'the CA certificate that signs client certificates (PEM)') : undefined;
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new Error(
      `--tlscert ${certPath} and --tlskey ${keyPath} do not make a certificate and its key (${(err as Error).message}): give the key the certificate was issued for`,
      { cause: err },
    );
  }
  if (ca && caPath) {
    try {
      createSecureContext({ ca });
    } catch (err) {
      throw new Error(`--tlscacert ${caPath}: not a CA certificate (${(err as Error).message})`, { cause: err });
    }
  }
  return { cert, key, ca, verifyClients };
}
