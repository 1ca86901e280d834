/**
 * Signal names and numbers as dockerd takes them (`kill --signal`, `stop --signal`): `TERM`, `SIGTERM`,
 * `sigterm`, `15`, `RTMIN+3`. Anything else is the client's error, found before berth runs `kill` in the pod.
 */
import { constants } from 'node:os';
import { badRequest } from '../http/http.js';

const MAX_SIGNAL = 64; // SIGRTMAX on Linux

/** The signal's name without `SIG` (or its number as given), or a 400 naming it. */
export function parseSignal(given: string): string {
  const s = given.trim().toUpperCase().replace(/^SIG/, '');
  if (/^\d+$/.test(s)) {
    const n = Number(s);
    if (n >= 1 && n <= MAX_SIGNAL) return String(n);
  } else if (Object.prototype.hasOwnProperty.call(constants.signals, `SIG${s}`) || /^RTMIN(\+([1-9]|1[0-5]))?$|^RTMAX(-([1-9]|1[0-5]))?$/.test(s)) {
    return s;
  }
  throw badRequest(`Invalid signal: ${given}`);
}
