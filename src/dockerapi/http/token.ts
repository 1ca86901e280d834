/**
 * The bearer token of `berth serve`: from --token, --token-file or $BERTH_SERVE_TOKEN (a file or the
 * environment keep it out of `ps`), at least MIN_TOKEN_LENGTH characters, since it is all that stands
 * between a non-loopback listener and the cluster.
 */
import { readFileSync } from 'node:fs';

export const MIN_TOKEN_LENGTH = 16;
export const TOKEN_ENV = 'BERTH_SERVE_TOKEN';

export class TokenError extends Error {}

/** Throws when `token` is too short to be a secret. */
export function checkToken(token: string, source: string): string {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new TokenError(`${source}: the token has ${token.length} characters, at least ${MIN_TOKEN_LENGTH} are needed (e.g. openssl rand -hex 24)`);
  }
  if (/\s/.test(token)) throw new TokenError(`${source}: the token contains white space, which an Authorization header cannot carry`);
  return token;
}

/** The token given, checked; undefined when none is. --token with --token-file is an error (which would win is not obvious). */
export function resolveToken(o: { token?: string; tokenFile?: string }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given: Array<[string, () => string]> = [];
  if (o.token !== undefined) given.push(['--token', () => o.token as string]);
  if (o.tokenFile !== undefined) {
    given.push([
      `--token-file ${o.tokenFile}`,
      () => {
        try {
          return readFileSync(o.tokenFile as string, 'utf8').replace(/\r?\n$/, '');
        } catch (err) {
          throw new TokenError(`--token-file ${o.tokenFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, {
            cause: err,
          });
        }
      },
    ]);
  }
  // The environment is the default a flag overrides, as everywhere.
  if (given.length === 0 && env[TOKEN_ENV] !== undefined && env[TOKEN_ENV] !== '') given.push([`$${TOKEN_ENV}`, () => env[TOKEN_ENV] as string]);
  if (given.length === 0) return undefined;
  if (given.length > 1) throw new TokenError('--token and --token-file both given: give one (--token-file keeps it out of ps)');
  const [source, read] = given[0];
  return checkToken(read(), source);
}
