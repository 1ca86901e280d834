// The bare pod cycle through the API: create a pod, watch it until `until` holds; milliseconds from the
// create request (sent once the watch is connected) to then. The pod is deleted afterwards.
import * as k8s from '@kubernetes/client-node';

export async function podPhase(
  kc: k8s.KubeConfig,
  core: k8s.CoreV1Api,
  ns: string,
  image: string,
  name: string,
  command: string[],
  until: (p: k8s.V1Pod) => boolean,
): Promise<number> {
  const watch = new k8s.Watch(kc);
  const list = await core.listNamespacedPod({ namespace: ns });
  let t0 = 0;
  let resolveReached!: (ms: number) => void;
  let rejectReached!: (err: unknown) => void;
  const reached = new Promise<number>((resolve, reject) => ((resolveReached = resolve), (rejectReached = reject)));
  // the watch is connected once client-node hands back its request; only then does the clock start
  const req = await watch.watch(
    `/api/v1/namespaces/${ns}/pods`,
    { resourceVersion: list.metadata!.resourceVersion, fieldSelector: `metadata.name=${name}` },
    (_t, pod: k8s.V1Pod) => {
      if (until(pod)) resolveReached(performance.now() - t0);
    },
    (err) => err && rejectReached(err),
  );
  t0 = performance.now();
  await core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image, command }] } },
  });
  const elapsed = await reached;
  req.abort();
  await core.deleteNamespacedPod({ namespace: ns, name, gracePeriodSeconds: 0 });
  return elapsed;
}
