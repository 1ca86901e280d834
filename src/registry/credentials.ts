/**
 * The user's registry credentials, found as the docker CLI finds them (docker/cli `cli/config`):
 * `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. For a registry host, a `credHelpers`
 * entry names its helper; else `credsStore` names one helper for every registry; else the `auths`
 * entries of the file are read (`auth` = base64 `user:password`, `identitytoken`, `registrytoken`).
 * A helper is the program `docker-credential-NAME` on PATH, run as `get` with the server URL on stdin,
 * answering `{ServerURL, Username, Secret}` (docker-credential-helpers); the username `<token>` means
 * the secret is an identity token. Docker Hub's credentials live under `https://index.docker.io/v1/`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface RegistryCredentials {
  username?: string;
  password?: string;
  /** An OAuth2 refresh token (docker's IdentityToken): traded for access tokens at the realm. */
  identityToken?: string;
  /** A bearer token sent as it is (docker's RegistryToken). */
  registryToken?: string;
  /** Where they came from, for messages: `~/.docker/config.json` or `docker-credential-pass`. */
  source: string;
}

export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
  identitytoken?: string;
  registrytoken?: string;
}

interface DockerConfigFile {
  auths?: Record<string, AuthEntry>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

const DOCKER_HUB_SERVER = 'https://index.docker.io/v1/';
const HUB_HOSTS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.DOCKER_CONFIG || path.join(env.HOME || os.homedir(), '.docker');
  return path.join(dir, 'config.json');
}

/** The key docker stores a registry's credentials under: the host, or Docker Hub's v1 URL. */
export function credentialServerKey(registry: string): string {
  return HUB_HOSTS.has(registry) ? DOCKER_HUB_SERVER : registry;
}

/** What `docker login` wants to hear for this registry (`docker login` alone for Docker Hub). */
export function loginCommand(registry: string): string {
  return HUB_HOSTS.has(registry) ? 'docker login' : `docker login ${registry}`;
}

/** docker/cli's ConvertToHostname: `https://host:port/v1/` and `host:port` name the same registry. */
function toHostname(key: string): string {
  return key.replace(/^https?:\/\//, '').split('/')[0];
}

function readConfig(file: string): DockerConfigFile | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DockerConfigFile;
  } catch (err) {
    throw new CredentialsError(`cannot read the docker config ${file}: ${(err as Error).message}`);
  }
}

/** The credentials for `registry` (`host[:port]`), or undefined when the user has none for it. */
export function findCredentials(registry: string, env: NodeJS.ProcessEnv = process.env): RegistryCredentials | undefined {
  const file = dockerConfigPath(env);
  const config = readConfig(file);
  if (!config) return undefined;
  const key = credentialServerKey(registry);
  const helper = config.credHelpers?.[key] ?? config.credHelpers?.[toHostname(key)] ?? config.credsStore;
  if (helper) return fromHelper(helper, key, env);
  return fromAuths(config.auths ?? {}, key, file);
}

function fromAuths(auths: Record<string, AuthEntry>, key: string, file: string): RegistryCredentials | undefined {
  const host = toHostname(key);
  const entry = auths[key] ?? Object.entries(auths).find(([k]) => toHostname(k) === host)?.[1];
  if (!entry) return undefined;
  const creds: RegistryCredentials = { source: file };
  if (entry.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new CredentialsError(`the auth entry for ${key} in ${file} is not base64 of user:password`);
    creds.username = decoded.slice(0, colon);
    creds.password = decoded.slice(colon + 1);
  } else if (entry.username) {
    creds.username = entry.username;
    creds.password = entry.password;
  }
  if (entry.identitytoken) creds.identityToken = entry.identitytoken;
  if (entry.registrytoken) creds.registryToken = entry.registrytoken;
  return creds.username || creds.identityToken || creds.registryToken ? creds : undefined;
}

function fromHelper(name: string, serverUrl: string, env: NodeJS.ProcessEnv): RegistryCredentials | undefined {
  const program = `docker-credential-${name}`;
  const run = spawnSync(program, ['get'], { input: serverUrl, env, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw new CredentialsError(`the docker config names the credential helper ${name}, but ${program} could not be run: ${run.error.message}`);
  const out = run.stdout.trim();
  if (run.status !== 0) {
    // docker-credential-helpers' "not found" answer: the user has simply not logged in there.
    if (/credentials not found/i.test(out) || /credentials not found/i.test(run.stderr)) return undefined;
    throw new CredentialsError(`${program} get ${serverUrl} failed (exit ${run.status}): ${(out || run.stderr).trim().slice(0, 300)}`);
  }
  let answer: { Username?: string; Secret?: string };
  try {
    answer = JSON.parse(out) as typeof answer;
  } catch {
    throw new CredentialsError(`${program} get ${serverUrl} did not answer JSON {ServerURL, Username, Secret}`);
  }
  if (!answer.Secret) return undefined;
  if (answer.Username === '<token>') return { identityToken: answer.Secret, source: program };
  return { username: answer.Username, password: answer.Secret, source: program };
}
