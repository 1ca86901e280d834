// The fault switches of the dev cluster's proxy, and the kubelet log rotation the same endpoint changes.

/** Fault switches for reliability tests, and the kubelet's log rotation; changed at run time through the admin endpoint. */
export interface Faults {
  /** drop exec/attach sockets without a status frame, and WebSocket port-forwards once connected, this fraction of sessions (0..1) */
  dropStreams: number;
  /** answer 500 InternalError to this fraction of API requests (0..1); streams and /healthz excluded */
  error500: number;
  /**
   * answer this fraction of API requests (0..1) as API Priority and Fairness answers what it cannot seat: 429,
   * `Retry-After: 1`, a plain-text body. Requests APF never throttles (exec, attach, logs, port-forward, proxy)
   * and /healthz are excluded; watches are not (APF seats a watch while it starts).
   */
  throttle429: number;
  /** end every watch after this many ms (0 = off) */
  endWatchAfterMs: number;
  /** delay the start of every pod's containers by this many ms */
  delayPodStartMs: number;
  /** refuse the next N port-forward upgrades with 500 InternalError; each refusal counts it down */
  failPortForwards: number;
  /**
   * the kubelet's containerLogMaxSize, in bytes: a running container's log file this large is rotated, and
   * `pods/log` then serves only the new file (0 = never). Smaller than the kubelet's 10 MiB, it lets a test
   * see what a real cluster does to a long-running container's log.
   */
  containerLogMaxBytes: number;
  /** the kubelet's containerLogMonitorInterval, in ms: how often a log's size is looked at (10 s) */
  containerLogCheckMs: number;
}

/** what a kubelet does by default: containerLogMaxSize 10Mi, containerLogMonitorInterval 10s */
export const KUBELET_LOG_ROTATION = { containerLogMaxBytes: 10 * 1024 * 1024, containerLogCheckMs: 10_000 } as const;

export const noFaults = (): Faults => ({
  dropStreams: 0,
  error500: 0,
  throttle429: 0,
  endWatchAfterMs: 0,
  delayPodStartMs: 0,
  failPortForwards: 0,
  ...KUBELET_LOG_ROTATION,
});
