// What every reliability suite shares: the dev cluster's fault switches, the fault cases every face is run
// under, and a tally that counts each run's verdict against the fault-free run and prints the counts.
import assert from 'node:assert/strict';
import { apiRequest } from '../harness/cluster.js';

export interface Faults {
  dropStreams?: number;
  error500?: number;
  throttle429?: number;
  endWatchAfterMs?: number;
  delayPodStartMs?: number;
  failPortForwards?: number;
  /** the kubelet's log rotation: rotate a running container's log at this many bytes, looked at every containerLogCheckMs */
  containerLogMaxBytes?: number;
  containerLogCheckMs?: number;
}

/** no fault, and the kubelet's own log rotation (10 MiB, looked at every 10 s) */
export const NO_FAULTS: Required<Faults> = {
  dropStreams: 0,
  error500: 0,
  throttle429: 0,
  endWatchAfterMs: 0,
  delayPodStartMs: 0,
  failPortForwards: 0,
  containerLogMaxBytes: 10 * 1024 * 1024,
  containerLogCheckMs: 10_000,
};

export interface FaultCase {
  name: string;
  faults: Faults;
  /** every failure under it is one a retry would have saved: only `exact` counts as right */
  retriable?: boolean;
}

/**
 * The four switches the reliability issue names, each strong enough to bite in a handful of runs, and throttling
 * as API Priority and Fairness does it: the server says the request was not run and when to come back.
 */
export const FAULT_CASES: readonly FaultCase[] = [
  { name: 'dropStreams 0.5', faults: { dropStreams: 0.5 } },
  { name: 'error500 0.2', faults: { error500: 0.2 } },
  { name: 'endWatchAfterMs 300', faults: { endWatchAfterMs: 300 } },
  { name: 'delayPodStartMs 1500', faults: { delayPodStartMs: 1500 } },
  { name: 'throttle429 0.3', faults: { throttle429: 0.3 }, retriable: true },
];

const RETRIABLE = new Set(FAULT_CASES.filter((c) => c.retriable).map((c) => c.name));

export async function setFaults(faults: Faults): Promise<void> {
  const r = await apiRequest('PUT', '/berth-dev/v1/faults', { body: { ...NO_FAULTS, ...faults } });
  assert.equal(r.code, 200, JSON.stringify(r.body));
}

/** Runs `body` with the faults on, and always switches them off again. */
export async function underFaults<T>(faults: Faults, body: () => Promise<T>): Promise<T> {
  await setFaults(faults);
  try {
    return await body();
  } finally {
    await setFaults(NO_FAULTS);
  }
}

/**
 * How a run under faults ended, compared with the fault-free run of the same scenario:
 * `exact` (same exit code and output), `failed` (non-zero, said why: allowed), `wrong` (exit 0 with
 * other output, or a non-zero code other than the scenario's own with its output: never allowed),
 * `hang` (did not end in time: never allowed).
 */
export type Verdict = 'exact' | 'failed' | 'wrong' | 'hang';

export interface RunOutcome {
  code: number | null;
  stdout: string | Buffer;
  /** true when the run was killed at its time limit */
  timedOut?: boolean;
}

export function judge(expected: RunOutcome, got: RunOutcome, berthFailureCodes: readonly number[]): Verdict {
  if (got.timedOut || got.code === null) return 'hang';
  const same = Buffer.from(got.stdout).equals(Buffer.from(expected.stdout));
  if (got.code === expected.code && same) return 'exact';
  // A failure of berth or the cluster, reported as such (docker's 125, berth fn's 1...), is allowed.
  if (got.code !== expected.code && got.code !== 0 && berthFailureCodes.includes(got.code)) return 'failed';
  return 'wrong';
}

/** Counts verdicts per fault case and prints them as one table at the end of a suite. */
export class Tally {
  private readonly rows = new Map<string, Record<Verdict, number>>();
  private readonly wrongs: string[] = [];

  constructor(private readonly suite: string) {}

  add(scenario: string, fault: string, verdict: Verdict, detail = ''): void {
    const key = `${scenario} | ${fault}`;
    const row = this.rows.get(key) ?? { exact: 0, failed: 0, wrong: 0, hang: 0 };
    row[verdict]++;
    this.rows.set(key, row);
    if (verdict === 'wrong' || verdict === 'hang') this.wrongs.push(`${key}: ${verdict} ${detail}`.slice(0, 2000));
    else if (verdict === 'failed' && RETRIABLE.has(fault))
      this.wrongs.push(`${key}: failed where waiting and retrying would have saved it: ${detail}`.slice(0, 2000));
  }

  /** Prints the table; the caller asserts on `bad()`. */
  print(): void {
    const lines = [
      `${this.suite}: runs under faults (exact = same exit code and output as without faults; failed = a reported failure, allowed except under throttling)`,
    ];
    for (const [key, r] of this.rows) lines.push(`  ${key.padEnd(60)} exact ${r.exact}  failed ${r.failed}  wrong ${r.wrong}  hang ${r.hang}`);
    console.log(lines.join('\n'));
  }

  bad(): string[] {
    return [...this.wrongs];
  }
}
