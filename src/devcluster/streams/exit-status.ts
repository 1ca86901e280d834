// What the server writes on channel 3 when an exec/attach session ends.
// v4/v5: one metav1.Status as JSON, serialised as Go does it (empty TypeMeta omitted, so no kind/apiVersion).
// v1-v3: plain error text, nothing on success.
import { internalError } from '../api/errors.js';
import type { ExitResult } from '../types.js';

export interface ChannelStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes: { reason?: string; message: string }[] };
  code?: number;
}

export type SessionKind = 'exec' | 'attach';

/** the kubelet's wording for a failed exec: `error executing command [sh -c exit 3], exit code 3` */
function nonZeroExitMessage(command: readonly string[], exitCode: number): string {
  return `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`;
}

/**
 * attach carries no exit code: the kubelet reports Success when the session ends, whatever the container's
 * exit code (clients read it from the pod status).
 */
export function sessionStatus(result: ExitResult, kind: SessionKind, command: readonly string[]): ChannelStatus {
  if ('error' in result) {
    const { kind: _k, apiVersion: _v, ...status } = internalError(result.error).toStatus();
    return { ...status, metadata: {} } as ChannelStatus;
  }
  if (result.exitCode === 0 || kind === 'attach') return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: nonZeroExitMessage(command, result.exitCode),
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(result.exitCode) }] },
  };
}

/** pre-v4 protocols: the error channel carries the error text only */
export function legacyErrorText(status: ChannelStatus): string | undefined {
  return status.status === 'Success' ? undefined : status.message;
}
