// Written by feed-pods.test.ts --write: the planned pods it pins.
import type { V1Pod } from '@kubernetes/client-node';

export const FEED_PODS: Record<string, V1Pod> = {
  'shim: a read-write folder and a small file': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'alpine-abc12345',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abc12345',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsGroup: 1000,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'berth-m1',
          configMap: {
            name: 'alpine-abc12345-files',
            items: [
              {
                key: 'm1.f0',
                path: 'file',
                mode: 420,
              },
            ],
          },
        },
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth && test -e /berth/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsUser: 1000,
            runAsGroup: 1000,
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
            },
          ],
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'alpine:3',
          imagePullPolicy: 'IfNotPresent',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          stdin: true,
          stdinOnce: true,
          tty: false,
          command: ['sh', '-c', 'cat'],
          volumeMounts: [
            {
              name: 'berth-m1',
              mountPath: '/etc/conf.yaml',
              readOnly: true,
              subPath: 'file',
            },
            {
              name: 'berth-files',
              mountPath: '/data',
              subPath: 'm0',
              readOnly: false,
            },
          ],
        },
      ],
    },
  },
  'shim: mounts and stdin as a file': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'alpine-abc12345',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abc12345',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsGroup: 1000,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'berth-m1',
          configMap: {
            name: 'alpine-abc12345-files',
            items: [
              {
                key: 'm1.f0',
                path: 'file',
                mode: 420,
              },
            ],
          },
        },
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth && test -e /berth/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsUser: 1000,
            runAsGroup: 1000,
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
            },
          ],
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'alpine:3',
          imagePullPolicy: 'IfNotPresent',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          stdin: false,
          stdinOnce: false,
          tty: false,
          command: ['/bin/sh', '-c', 'exec "$@" < /berth/stdin', 'berth-stdin', 'sh', '-c', 'cat'],
          args: [],
          volumeMounts: [
            {
              name: 'berth-m1',
              mountPath: '/etc/conf.yaml',
              readOnly: true,
              subPath: 'file',
            },
            {
              name: 'berth-files',
              mountPath: '/data',
              subPath: 'm0',
              readOnly: false,
            },
            {
              name: 'berth-files',
              mountPath: '/berth',
              subPath: 'stdin',
              readOnly: true,
            },
          ],
        },
      ],
    },
  },
  'shim: stdin as a file under a pod template': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'alpine-abc12345',
      namespace: 'ci',
      labels: {
        team: 'a',
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abc12345',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
      },
    },
    spec: {
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 4242,
        runAsGroup: 1000,
        runAsNonRoot: true,
        fsGroup: 4242,
      },
      containers: [
        {
          name: 'main',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsGroup: 7,
          },
          image: 'alpine:3',
          imagePullPolicy: 'IfNotPresent',
          stdin: false,
          stdinOnce: false,
          tty: false,
          command: ['/bin/sh', '-c', 'exec "$@" < /berth/stdin', 'berth-stdin', 'sh', '-c', 'cat'],
          args: [],
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
              subPath: 'stdin',
              readOnly: true,
            },
          ],
        },
      ],
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth && test -e /berth/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsUser: 1000,
            runAsGroup: 1000,
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
            },
          ],
        },
      ],
    },
  },
  'fn: a mount, --network none, stdin as a file': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'set-labels-abc12345',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abc12345',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 65534,
        runAsGroup: 65534,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth && test -e /berth/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsUser: 65534,
            runAsGroup: 65534,
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
            },
          ],
        },
        {
          name: 'berth-isolation',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            'h=$KUBERNETES_SERVICE_HOST; case $h in *:*) h="[$h]";; esac\nend=$(( $(date +%s) + 60 ))\nwhile :; do\n  out=$(timeout 2 wget -q -O /dev/null "http://$h:$KUBERNETES_SERVICE_PORT/" 2>&1); rc=$?\n  case "$rc $out" in "0 "*|*"server returned error"*) ;; *) exit 0;; esac\n  [ "$(date +%s)" -lt "$end" ] || { echo \'berth: --network none: the pod could still open connections 60 s after its deny-all NetworkPolicy was created; the cluster enforces no NetworkPolicy (install a network plugin that does, such as Calico, Cilium or kube-router)\' >&2; exit 1; }\n  sleep 0.2\ndone',
          ],
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'ghcr.io/fn/set-labels:v1',
          imagePullPolicy: 'IfNotPresent',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          stdin: false,
          stdinOnce: false,
          tty: false,
          command: ['/bin/sh', '-c', 'exec "$@" < /berth/stdin', 'berth-stdin', '/fn'],
          args: [],
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/data',
              subPath: 'm0',
              readOnly: false,
            },
            {
              name: 'berth-files',
              mountPath: '/berth',
              subPath: 'stdin',
              readOnly: true,
            },
          ],
        },
      ],
    },
  },
  'fn: stdin as a file only': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'set-labels-abc12345',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abc12345',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 65534,
        runAsGroup: 65534,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth && test -e /berth/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsUser: 65534,
            runAsGroup: 65534,
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
            },
          ],
        },
        {
          name: 'berth-isolation',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            'h=$KUBERNETES_SERVICE_HOST; case $h in *:*) h="[$h]";; esac\nend=$(( $(date +%s) + 60 ))\nwhile :; do\n  out=$(timeout 2 wget -q -O /dev/null "http://$h:$KUBERNETES_SERVICE_PORT/" 2>&1); rc=$?\n  case "$rc $out" in "0 "*|*"server returned error"*) ;; *) exit 0;; esac\n  [ "$(date +%s)" -lt "$end" ] || { echo \'berth: --network none: the pod could still open connections 60 s after its deny-all NetworkPolicy was created; the cluster enforces no NetworkPolicy (install a network plugin that does, such as Calico, Cilium or kube-router)\' >&2; exit 1; }\n  sleep 0.2\ndone',
          ],
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'ghcr.io/fn/set-labels:v1',
          imagePullPolicy: 'IfNotPresent',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          stdin: false,
          stdinOnce: false,
          tty: false,
          command: ['/bin/sh', '-c', 'exec "$@" < /berth/stdin', 'berth-stdin', '/fn'],
          args: [],
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth',
              subPath: 'stdin',
              readOnly: true,
            },
          ],
        },
      ],
    },
  },
  'task: inputs, outputs, params, run.dir': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'task-abcd1234',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abcd1234',
        'app.kubernetes.io/component': 'task',
        'berth.dev/step': 'build',
        'berth.dev/target': 'kind',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/step': 'build',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'work',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'inputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C '/tmp/build/0a1b2c3d' && test -e '/tmp/build/0a1b2c3d/.berth-inputs-complete' || { echo 'berth: the inputs stream was cut before its end' >&2; exit 1; } && rm -f '/tmp/build/0a1b2c3d/.berth-inputs-complete' || exit 1\nmkdir -p '/tmp/build/0a1b2c3d/out' && mkdir -p '/tmp/build/0a1b2c3d/src/sub' && find '/tmp/build/0a1b2c3d' -type d ! -perm -0777 -exec chmod a+rwx {} + || exit 3",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
      containers: [
        {
          name: 'task',
          image: 'busybox:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['make'],
          workingDir: '/tmp/build/0a1b2c3d/src/sub',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
          env: [
            {
              name: 'A',
              valueFrom: {
                secretKeyRef: {
                  name: 'task-abcd1234-params',
                  key: 'p0',
                },
              },
            },
          ],
        },
        {
          name: 'outputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'exec sleep 600'],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
    },
  },
  'task: with caches': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'task-abcd1234',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abcd1234',
        'app.kubernetes.io/component': 'task',
        'berth.dev/step': 'build',
        'berth.dev/target': 'kind',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/step': 'build',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsNonRoot: true,
      },
      volumes: [
        {
          name: 'work',
          emptyDir: {},
        },
        {
          name: 'cache-0',
          persistentVolumeClaim: {
            claimName: 'claim-1',
          },
        },
      ],
      initContainers: [
        {
          name: 'inputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C '/tmp/build/0a1b2c3d' && test -e '/tmp/build/0a1b2c3d/.berth-inputs-complete' || { echo 'berth: the inputs stream was cut before its end' >&2; exit 1; } && rm -f '/tmp/build/0a1b2c3d/.berth-inputs-complete' || exit 1\nmkdir -p '/tmp/build/0a1b2c3d/out' && mkdir -p '/tmp/build/0a1b2c3d/src/sub' && find '/tmp/build/0a1b2c3d' \\( -path '/tmp/build/0a1b2c3d/cache/go' \\) -prune -o -type d ! -perm -0777 -exec chmod a+rwx {} + && { chmod a+rwx '/tmp/build/0a1b2c3d/cache/go' 2>/dev/null || true; } || exit 3",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
            {
              name: 'cache-0',
              mountPath: '/tmp/build/0a1b2c3d/cache/go',
            },
          ],
        },
      ],
      containers: [
        {
          name: 'task',
          image: 'busybox:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['make'],
          workingDir: '/tmp/build/0a1b2c3d/src/sub',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
            {
              name: 'cache-0',
              mountPath: '/tmp/build/0a1b2c3d/cache/go',
            },
          ],
          env: [
            {
              name: 'A',
              valueFrom: {
                secretKeyRef: {
                  name: 'task-abcd1234-params',
                  key: 'p0',
                },
              },
            },
          ],
        },
        {
          name: 'outputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'exec sleep 600'],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
    },
  },
  'task: under a target template': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'task-abcd1234',
      namespace: 'ci',
      labels: {
        team: 'a',
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abcd1234',
        'app.kubernetes.io/component': 'task',
        'berth.dev/step': 'build',
        'berth.dev/target': 'kind',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/step': 'build',
      },
    },
    spec: {
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsNonRoot: true,
        fsGroup: 4242,
      },
      containers: [
        {
          name: 'task',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
            runAsGroup: 7,
          },
          image: 'busybox:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['make'],
          workingDir: '/tmp/build/0a1b2c3d/src/sub',
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
          env: [
            {
              name: 'A',
              valueFrom: {
                secretKeyRef: {
                  name: 'task-abcd1234-params',
                  key: 'p0',
                },
              },
            },
          ],
        },
        {
          name: 'outputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'exec sleep 600'],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      volumes: [
        {
          name: 'work',
          emptyDir: {},
        },
      ],
      initContainers: [
        {
          name: 'inputs',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C '/tmp/build/0a1b2c3d' && test -e '/tmp/build/0a1b2c3d/.berth-inputs-complete' || { echo 'berth: the inputs stream was cut before its end' >&2; exit 1; } && rm -f '/tmp/build/0a1b2c3d/.berth-inputs-complete' || exit 1\nmkdir -p '/tmp/build/0a1b2c3d/out' && mkdir -p '/tmp/build/0a1b2c3d/src/sub' && find '/tmp/build/0a1b2c3d' -type d ! -perm -0777 -exec chmod a+rwx {} + || exit 3",
          ],
          stdin: true,
          stdinOnce: true,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
    },
  },
  'task: nothing to feed': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'task-abcd1234',
      namespace: 'ci',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/run': 'abcd1234',
        'app.kubernetes.io/component': 'task',
        'berth.dev/step': 'build',
        'berth.dev/target': 'kind',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/step': 'build',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 10,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
      },
      volumes: [
        {
          name: 'work',
          emptyDir: {},
        },
      ],
      containers: [
        {
          name: 'task',
          image: 'busybox:1',
          imagePullPolicy: 'IfNotPresent',
          command: ['ls'],
          workingDir: '/tmp/build/0a1b2c3d',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
          volumeMounts: [
            {
              name: 'work',
              mountPath: '/tmp/build/0a1b2c3d',
            },
          ],
        },
      ],
    },
  },
  'serve: files copied before start, command unknown': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'ns',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/container': 'abababababab',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/docker-container': '{}',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 1,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 1000,
        runAsGroup: 1000,
        runAsNonRoot: true,
      },
      containers: [
        {
          name: 'main',
          image: 'docker.io/library/busybox:latest',
          imagePullPolicy: 'IfNotPresent',
          stdin: false,
          stdinOnce: false,
          tty: false,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/etc/app.conf',
              subPath: '0/app.conf',
              readOnly: false,
            },
            {
              name: 'berth-files',
              mountPath: '/srv/www/index.html',
              subPath: '1/www/index.html',
              readOnly: false,
            },
          ],
        },
      ],
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      hostname: 'abababababab',
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth-files && test -e /berth-files/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth-files',
            },
          ],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
          },
        },
      ],
    },
  },
  'serve: files fed under a pod template': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'ns',
      labels: {
        team: 'a',
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/container': 'abababababab',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/docker-container': '{}',
      },
    },
    spec: {
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
        runAsUser: 4242,
        fsGroup: 4242,
      },
      containers: [
        {
          name: 'main',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
            runAsGroup: 7,
          },
          image: 'docker.io/library/busybox:latest',
          imagePullPolicy: 'IfNotPresent',
          stdin: false,
          stdinOnce: false,
          tty: false,
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/etc/app.conf',
              subPath: '0/app.conf',
              readOnly: false,
            },
            {
              name: 'berth-files',
              mountPath: '/srv/www/index.html',
              subPath: '1/www/index.html',
              readOnly: false,
            },
          ],
        },
      ],
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 1,
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      hostname: 'abababababab',
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth-files && test -e /berth-files/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth-files',
            },
          ],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
            runAsGroup: 7,
          },
        },
      ],
    },
  },
  'serve: files fed, NetworkMode=none': {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'ns',
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        'berth.dev/owner': 'unit-owner',
        'berth.dev/container': 'abababababab',
      },
      annotations: {
        'berth.dev/expires-at': 'EXPIRY',
        'berth.dev/docker-container': '{}',
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 600,
      terminationGracePeriodSeconds: 1,
      securityContext: {
        seccompProfile: {
          type: 'RuntimeDefault',
        },
      },
      containers: [
        {
          name: 'main',
          image: 'docker.io/library/busybox:latest',
          imagePullPolicy: 'IfNotPresent',
          stdin: false,
          stdinOnce: false,
          tty: false,
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
          },
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/etc/app.conf',
              subPath: '0/app.conf',
              readOnly: false,
            },
            {
              name: 'berth-files',
              mountPath: '/srv/www/index.html',
              subPath: '1/www/index.html',
              readOnly: false,
            },
          ],
        },
      ],
      volumes: [
        {
          name: 'berth-files',
          emptyDir: {},
        },
      ],
      hostname: 'abababababab',
      initContainers: [
        {
          name: 'berth-files',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            "tar -x -o -f - -C /berth-files && test -e /berth-files/.berth-complete || { echo 'berth: the file copy stream was cut before its end' >&2; exit 1; }",
          ],
          stdin: true,
          stdinOnce: true,
          volumeMounts: [
            {
              name: 'berth-files',
              mountPath: '/berth-files',
            },
          ],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
              add: [
                'CHOWN',
                'DAC_OVERRIDE',
                'FSETID',
                'FOWNER',
                'MKNOD',
                'NET_RAW',
                'SETGID',
                'SETUID',
                'SETFCAP',
                'SETPCAP',
                'NET_BIND_SERVICE',
                'SYS_CHROOT',
                'KILL',
                'AUDIT_WRITE',
              ],
            },
          },
        },
        {
          name: 'berth-isolation',
          image: 'helper:1',
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            'h=$KUBERNETES_SERVICE_HOST; case $h in *:*) h="[$h]";; esac\nend=$(( $(date +%s) + 60 ))\nwhile :; do\n  out=$(timeout 2 wget -q -O /dev/null "http://$h:$KUBERNETES_SERVICE_PORT/" 2>&1); rc=$?\n  case "$rc $out" in "0 "*|*"server returned error"*) ;; *) exit 0;; esac\n  [ "$(date +%s)" -lt "$end" ] || { echo \'berth: --network none: the pod could still open connections 60 s after its deny-all NetworkPolicy was created; the cluster enforces no NetworkPolicy (install a network plugin that does, such as Calico, Cilium or kube-router)\' >&2; exit 1; }\n  sleep 0.2\ndone',
          ],
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: {
              drop: ['ALL'],
            },
          },
        },
      ],
    },
  },
};
