// containerd runs runc through this wrapper, so the reliability tests' `delayPodStartMs` slows the start of a pod's
// containers (never its sandbox) on the node, where the kubelet and containerd see it as a slow start.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MACHINE } from '../layout.js';

export const RUNC_WRAPPER = join(MACHINE.run, 'runc-delayed');
export const DELAY_FILE = join(MACHINE.run, 'delay-pod-start-ms');

export function writeRuncWrapper(): void {
  const script = `#!/bin/sh
# runc, delayed at the creation of a pod's containers (not its sandbox) by the milliseconds in ${DELAY_FILE}
if [ -s ${DELAY_FILE} ]; then
  prev=; bundle=; create=
  for a in "$@"; do
    [ "$prev" = --bundle ] && bundle=$a
    [ "$a" = create ] && create=1
    prev=$a
  done
  if [ -n "$create" ] && [ -n "$bundle" ] && grep -q '"io.kubernetes.cri.container-type":"container"' "$bundle/config.json"; then
    sleep "$(awk "BEGIN { print $(cat ${DELAY_FILE}) / 1000 }")"
  fi
fi
exec /usr/sbin/runc "$@"
`;
  writeFileSync(RUNC_WRAPPER, script);
  chmodSync(RUNC_WRAPPER, 0o755);
}

export function setPodStartDelay(ms: number): void {
  writeFileSync(DELAY_FILE, ms > 0 ? String(Math.round(ms)) : '');
}
