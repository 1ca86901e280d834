// Plans whose second step runs in the image the first step wrote (task/image-artifact.test.ts, task/image-trust.test.ts).

/** A first step that writes a root filesystem of its own (its static busybox, a file) and metadata.json's env. */
export const ROOTFS_PLAN = `
plan:
  - task: make-image
    config:
      platform: linux
      outputs: [{ name: img }]
      run:
        path: sh
        args:
          - -c
          - |
            mkdir -p img/rootfs/bin && cp /bin/busybox img/rootfs/bin/ && ln -s busybox img/rootfs/bin/sh && ln -s busybox img/rootfs/bin/cat
            echo made in step one > img/rootfs/hello
            echo '{"env": ["GREETING=from the metadata", "PATH=/bin"], "user": ""}' > img/metadata.json
  - task: run-in-it
    image: img
    config:
      platform: linux
      run: { path: sh, args: [-c, 'cat /hello; echo "$GREETING"; test ! -e /etc/os-release'] }
`;
