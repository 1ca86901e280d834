/**
 * Instants of a log, as nanoseconds since the epoch (bigint: a double holds only microseconds there), in the
 * three spellings docker logs meets: dockerd's `since`/`until` (seconds[.fraction]), the kubelet's line
 * timestamps (RFC 3339 with up to 9 fractional digits), and a pods/log `sinceTime` (RFC 3339, whole seconds:
 * metav1.Time travels to the kubelet without its fraction).
 */

const NANOS_PER_SECOND = 1_000_000_000n;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * dockerd's `since` / `until` of GET /containers/{id}/logs: a Unix time in seconds with an optional fraction,
 * which the docker CLI sends as `%d.%09d`. Parsed as dockerd parses it (daemon/internal/timestamp): up to 20
 * fractional digits, cut to nanoseconds; a refusal is dockerd's sentence.
 */
export function parseUnixTimestamp(value: string): bigint {
  const dot = value.indexOf('.');
  const seconds = dot < 0 ? value : value.slice(0, dot);
  const fraction = dot < 0 ? '' : value.slice(dot + 1);
  const invalid = (why: string): Error => new Error(`invalid timestamp "${value}": ${why}`);
  // Go's strconv.ParseInt: an optional sign, then decimal digits, within int64.
  if (!/^[+-]?\d+$/.test(seconds)) throw invalid(`invalid seconds "${seconds}": invalid syntax`);
  const sec = BigInt(seconds);
  if (sec > INT64_MAX || sec < -INT64_MAX - 1n) throw invalid(`invalid seconds "${seconds}": value out of range`);
  if (fraction.length > 20) throw invalid(`invalid nanoseconds: length ${fraction.length} exceeds maximum 20`);
  const bad = /[^0-9]/.exec(fraction);
  if (bad) throw invalid(`invalid nanoseconds: invalid character '${bad[0]}' at position ${bad.index}`);
  return sec * NANOS_PER_SECOND + BigInt(fraction.slice(0, 9).padEnd(9, '0'));
}

/** A kubelet log timestamp (RFC 3339, up to nanoseconds), comparable exactly; undefined when it is none. */
export function timestampNanos(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/**
 * An instant as dockerd writes a log line's timestamp (`docker logs -t`): RFC 3339 in UTC with all 9 fractional
 * digits (its RFC3339NanoFixed, `2006-01-02T15:04:05.000000000Z07:00`), where the kubelet drops trailing zeros.
 */
export function dockerLogTimestamp(nanos: bigint): string {
  const ms = nanos / 1_000_000n - (nanos % 1_000_000n < 0n ? 1n : 0n);
  const fraction = ((nanos % NANOS_PER_SECOND) + NANOS_PER_SECOND) % NANOS_PER_SECOND;
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${String(fraction).padStart(9, '0')}Z`;
}

/**
 * A kubelet log timestamp as dockerd writes it (see dockerLogTimestamp); undefined when it is none. A time in UTC,
 * as the kubelet writes them, only has its fraction padded: no date arithmetic for each line of a large log.
 */
export function dockerLogTimestampOf(ts: string): string | undefined {
  const utc = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(ts);
  if (utc) return `${utc[1]}.${(utc[2] ?? '').padEnd(9, '0')}Z`;
  const nanos = timestampNanos(ts);
  return nanos === undefined ? undefined : dockerLogTimestamp(nanos);
}

/** The last second RFC 3339 spells with four digits of year. */
const LAST_SECOND = 253_402_300_799n;

/**
 * The `sinceTime` that reads a log from the start of the second holding `nanos` (lines before it in that second
 * too), kept within the years RFC 3339 spells: a log has no line before 1970, nor after 9999.
 */
export function sinceTimeOf(nanos: bigint): string {
  const seconds = nanos < 0n ? 0n : nanos / NANOS_PER_SECOND;
  const within = seconds > LAST_SECOND ? LAST_SECOND : seconds;
  return new Date(Number(within) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Whether `nanos` is a whole second (a `sinceTime` then selects exactly the lines from it on). */
export function isWholeSecond(nanos: bigint): boolean {
  return nanos % NANOS_PER_SECOND === 0n;
}

/** The current time in nanoseconds (to milliseconds). */
export function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
