/**
 * A point in time as dockerd reads the prune filter `until` (moby's timestamp.Parse): a Go duration back
 * from now (`10m`, `1h30m`), an RFC 3339 date or time (the zone may be left out: then the server's own, as
 * dockerd takes its own), or unix seconds with an optional fraction (`1700000000.5`). The docker CLI sends
 * prune filters as the user typed them, so the server parses them.
 */

/** What a filter's time may be, for the message that refuses one. */
export const TIME_OR_DURATION_FORMS = 'a duration back from now such as 10m or 24h, an RFC 3339 time such as 2006-01-02T15:04:05Z, or unix seconds';

/** Milliseconds per unit of Go's time.ParseDuration. */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds; undefined where Go answers an error (`5`, `1d`, `h`). */
export function goDurationMs(text: string): number | undefined {
  const sign = text.startsWith('-') ? -1 : 1;
  const rest = text.replace(/^[-+]/, '');
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  // `ms` before `m`: an alternation takes its first match, and `5ms` is not 5 minutes and an `s`.
  const segment = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < rest.length) {
    segment.lastIndex = at;
    const m = segment.exec(rest);
    if (!m || (m[1] === '' && !m[2])) return undefined;
    total += Number(`${m[1] || '0'}.${m[2] || '0'}`) * UNIT_MS[m[3]];
    at = segment.lastIndex;
  }
  return sign * total;
}

const DATE_TIME = /^(?<y>\d{4})-(?<mo>\d{2})-(?<d>\d{2})(?:T(?<h>\d{2})(?::(?<mi>\d{2})(?::(?<s>\d{2})(?:\.(?<f>\d+))?)?)?)?(?<z>Z|[+-]\d{2}:\d{2})?$/;

type Shape = 'date' | 'hour' | 'minute' | 'second';

/**
 * The layout dockerd picks for a value (moby's timestamp.Parse): a `.` means seconds with a fraction, a `T`
 * a time of as many parts as it has colons (one of them belongs to a `+hh:mm` zone), else a date; with a
 * zone when the value has a `Z`, a `+` or three dashes.
 */
function layoutOf(value: string): { shape: Shape; zoned: boolean } {
  const zoned = /[zZ+]/.test(value) || value.split('-').length - 1 === 3;
  if (value.includes('.')) return { shape: 'second', zoned };
  if (!value.includes('T')) return { shape: 'date', zoned };
  let colons = value.split(':').length - 1;
  if (zoned && !/[zZ]/.test(value) && colons > 0) colons--;
  return { shape: colons === 0 ? 'hour' : colons === 1 ? 'minute' : 'second', zoned };
}

/** Milliseconds of a UTC date and time; any year (Date.UTC reads 0–99 as 1900–1999). */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

const daysIn = (year: number, month: number): number => new Date(utcMs(year, month + 1, 0, 0, 0, 0)).getUTCDate();

/** An RFC 3339 date or time in the layout dockerd picks for it; undefined when it does not fit that layout. */
function dateTimeMs(value: string, localOffsetMinutes: number): number | undefined {
  const g = DATE_TIME.exec(value)?.groups;
  if (!g) return undefined;
  const want = layoutOf(value);
  const got: Shape = g.s !== undefined ? 'second' : g.mi !== undefined ? 'minute' : g.h !== undefined ? 'hour' : 'date';
  if (got !== want.shape || (g.z !== undefined) !== want.zoned || (g.f !== undefined && !value.includes('.'))) return undefined;
  const [y, mo, d, h, mi, s] = [g.y, g.mo, g.d, g.h ?? '0', g.mi ?? '0', g.s ?? '0'].map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  const fraction = g.f ? Number(`0.${g.f}`) * 1000 : 0;
  return utcMs(y, mo, d, h, mi, s) + fraction - zoneOffsetMinutes(g.z, localOffsetMinutes) * 60_000;
}

function zoneOffsetMinutes(zone: string | undefined, local: number): number {
  if (zone === undefined) return local;
  if (zone === 'Z') return 0;
  const [hh, mm] = zone.slice(1).split(':').map(Number);
  return (zone.startsWith('-') ? -1 : 1) * (hh * 60 + mm);
}

/**
 * `value` as milliseconds since the epoch, read as dockerd reads `until`; undefined when it is none of a
 * duration, an RFC 3339 time or unix seconds. `now` is the reference of durations and of the local zone.
 */
export function parseTimeOrDuration(value: string, now: number): number | undefined {
  if (value.trim() === '') return undefined;
  const duration = value === '0' ? undefined : goDurationMs(value);
  if (duration !== undefined) return now - duration;
  const local = -new Date(now).getTimezoneOffset();
  const time = dateTimeMs(value, local);
  if (time !== undefined) return time;
  // A value with a dash was meant as a date: dockerd answers its parse error rather than try seconds.
  if (value.includes('-')) return undefined;
  const unix = /^\+?(\d+)(?:\.(\d+))?$/.exec(value);
  return unix ? Number(unix[1]) * 1000 + (unix[2] ? Number(`0.${unix[2]}`) * 1000 : 0) : undefined;
}
