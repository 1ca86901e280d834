/**
 * The Docker API versions berth serves, and the versions at which what it answers changes shape. berth announces
 * what dockerd 29.0 announces (API 1.52, minimum 1.44); the minimum can be lowered as dockerd's
 * DOCKER_MIN_API_VERSION lowers it, down to 1.24, whose differences berth implements (a 1.24 client's `filter` on
 * images, pre-1.42 volume prune).
 */

export const API_VERSION = '1.52';
/** dockerd 29's default minimum: older clients are refused ("client version … is too old") unless lowered. */
export const DEFAULT_MIN_API_VERSION = '1.44';
/** The oldest version berth can be told to serve, as dockerd: its differences from 1.24 on are implemented. */
export const OLDEST_API_VERSION = '1.24';
/**
 * The dockerd release whose API berth serves, announced as the engine's version: clients gate on it
 * (testcontainers-java refuses an engine below 1.6.0), and a version that matches the API is the one they can reason
 * from. berth's own version is a component of its own in /version and the Platform name.
 */
export const ENGINE_VERSION = '29.0.0';
/** dockerd's environment variable for the minimum, honoured by `berth serve` as its default. */
export const MIN_API_VERSION_ENV = 'DOCKER_MIN_API_VERSION';

export function compareVersions(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am - bm || an - bn;
}

/** True when a request of API `version` has the behaviour introduced in `introduced`. */
export const since = (version: string, introduced: string): boolean => compareVersions(version, introduced) >= 0;

/** The minimum a user gave (`--min-api-version`, $DOCKER_MIN_API_VERSION), checked; `source` names where it came from. */
export function parseMinApiVersion(raw: string, source: string): string {
  const value = raw.trim().replace(/^v/, '');
  if (!/^\d+\.\d+$/.test(value)) throw new Error(`${source} ${JSON.stringify(raw)}: give an API version such as ${DEFAULT_MIN_API_VERSION}`);
  if (compareVersions(value, OLDEST_API_VERSION) < 0 || compareVersions(value, API_VERSION) > 0)
    throw new Error(`${source} ${value}: berth serves API versions ${OLDEST_API_VERSION} to ${API_VERSION}; give one in that range`);
  return value;
}
