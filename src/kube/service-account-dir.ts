/**
 * Where a pod finds its ServiceAccount's token, CA and namespace. Its own module, free of the Kubernetes
 * client, so that code which only needs the path (the shim's start-up) does not load the client.
 */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
