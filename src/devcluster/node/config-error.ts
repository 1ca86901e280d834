// A pod's configuration cannot be turned into a container (missing ConfigMap, runAsNonRoot with a root
// image, ...): the kubelet reports it as waiting reason CreateContainerConfigError and retries.
export class ConfigError extends Error {}
