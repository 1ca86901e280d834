// The parts of @kubernetes/client-node that berth runs (its types come from the package itself). The build
// replaces this module's output with one bundle of them (scripts/bundle-client-node.mjs): loading the
// package's 826 modules cost every berth process 280–470 ms on the bench machine, the bundle 115–140 ms. Import
// client-node's values from here; a value used here for the first time needs no other step.
export { AuthorizationV1Api, CoordinationV1Api, CoreV1Api, KubeConfig, NetworkingV1Api, V1MicroTime, VersionApi, Watch } from '@kubernetes/client-node';
