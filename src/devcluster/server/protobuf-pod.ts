// The core/v1 Pod in Kubernetes protobuf, which `kubectl debug --copy-to` sends: every message reachable from Pod,
// field numbers from k8s.io/api v0.32 core/v1/generated.proto, with the Go pointers (`pointer`) and embedded structs
// (`inline`) read from the protobuf tags of core/v1/types.go. Produced from those two files by a one-off script
// (protobufjs parse, then a walk from Pod); regenerate rather than edit by hand.
import { f, LABEL_SELECTOR, OBJECT_META, type Message } from './protobuf-schema.js';

const HOST_PATH_VOLUME_SOURCE: Message = {
  1: f('path', 'string'),
  2: f('type', 'string', { pointer: true }),
};
const EMPTY_DIR_VOLUME_SOURCE: Message = {
  1: f('medium', 'string'),
  2: f('sizeLimit', 'quantity', { pointer: true }),
};
const GCE_PERSISTENT_DISK_VOLUME_SOURCE: Message = {
  1: f('pdName', 'string'),
  2: f('fsType', 'string'),
  3: f('partition', 'int'),
  4: f('readOnly', 'bool'),
};
const AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE: Message = {
  1: f('volumeID', 'string'),
  2: f('fsType', 'string'),
  3: f('partition', 'int'),
  4: f('readOnly', 'bool'),
};
const GIT_REPO_VOLUME_SOURCE: Message = {
  1: f('repository', 'string'),
  2: f('revision', 'string'),
  3: f('directory', 'string'),
};
const KEY_TO_PATH: Message = {
  1: f('key', 'string'),
  2: f('path', 'string'),
  3: f('mode', 'int', { pointer: true }),
};
const SECRET_VOLUME_SOURCE: Message = {
  1: f('secretName', 'string'),
  2: f('items', KEY_TO_PATH, { repeated: true }),
  3: f('defaultMode', 'int', { pointer: true }),
  4: f('optional', 'bool', { pointer: true }),
};
const NFS_VOLUME_SOURCE: Message = {
  1: f('server', 'string'),
  2: f('path', 'string'),
  3: f('readOnly', 'bool'),
};
const LOCAL_OBJECT_REFERENCE: Message = {
  1: f('name', 'string'),
};
const ISCSI_VOLUME_SOURCE: Message = {
  1: f('targetPortal', 'string'),
  2: f('iqn', 'string'),
  3: f('lun', 'int'),
  4: f('iscsiInterface', 'string'),
  5: f('fsType', 'string'),
  6: f('readOnly', 'bool'),
  7: f('portals', 'string', { repeated: true }),
  8: f('chapAuthDiscovery', 'bool'),
  11: f('chapAuthSession', 'bool'),
  10: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
  12: f('initiatorName', 'string', { pointer: true }),
};
const GLUSTERFS_VOLUME_SOURCE: Message = {
  1: f('endpoints', 'string'),
  2: f('path', 'string'),
  3: f('readOnly', 'bool'),
};
const PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: Message = {
  1: f('claimName', 'string'),
  2: f('readOnly', 'bool'),
};
const RBD_VOLUME_SOURCE: Message = {
  1: f('monitors', 'string', { repeated: true }),
  2: f('image', 'string'),
  3: f('fsType', 'string'),
  4: f('pool', 'string'),
  5: f('user', 'string'),
  6: f('keyring', 'string'),
  7: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
  8: f('readOnly', 'bool'),
};
const FLEX_VOLUME_SOURCE: Message = {
  1: f('driver', 'string'),
  2: f('fsType', 'string'),
  3: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
  4: f('readOnly', 'bool'),
  5: f('options', { map: 'string' }),
};
const CINDER_VOLUME_SOURCE: Message = {
  1: f('volumeID', 'string'),
  2: f('fsType', 'string'),
  3: f('readOnly', 'bool'),
  4: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
};
const CEPH_FS_VOLUME_SOURCE: Message = {
  1: f('monitors', 'string', { repeated: true }),
  2: f('path', 'string'),
  3: f('user', 'string'),
  4: f('secretFile', 'string'),
  5: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
  6: f('readOnly', 'bool'),
};
const FLOCKER_VOLUME_SOURCE: Message = {
  1: f('datasetName', 'string'),
  2: f('datasetUUID', 'string'),
};
const OBJECT_FIELD_SELECTOR: Message = {
  1: f('apiVersion', 'string'),
  2: f('fieldPath', 'string'),
};
const RESOURCE_FIELD_SELECTOR: Message = {
  1: f('containerName', 'string'),
  2: f('resource', 'string'),
  3: f('divisor', 'quantity'),
};
const DOWNWARD_API_VOLUME_FILE: Message = {
  1: f('path', 'string'),
  2: f('fieldRef', OBJECT_FIELD_SELECTOR, { pointer: true }),
  3: f('resourceFieldRef', RESOURCE_FIELD_SELECTOR, { pointer: true }),
  4: f('mode', 'int', { pointer: true }),
};
const DOWNWARD_API_VOLUME_SOURCE: Message = {
  1: f('items', DOWNWARD_API_VOLUME_FILE, { repeated: true }),
  2: f('defaultMode', 'int', { pointer: true }),
};
const FC_VOLUME_SOURCE: Message = {
  1: f('targetWWNs', 'string', { repeated: true }),
  2: f('lun', 'int', { pointer: true }),
  3: f('fsType', 'string'),
  4: f('readOnly', 'bool'),
  5: f('wwids', 'string', { repeated: true }),
};
const AZURE_FILE_VOLUME_SOURCE: Message = {
  1: f('secretName', 'string'),
  2: f('shareName', 'string'),
  3: f('readOnly', 'bool'),
};
const CONFIG_MAP_VOLUME_SOURCE: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('items', KEY_TO_PATH, { repeated: true }),
  3: f('defaultMode', 'int', { pointer: true }),
  4: f('optional', 'bool', { pointer: true }),
};
const VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE: Message = {
  1: f('volumePath', 'string'),
  2: f('fsType', 'string'),
  3: f('storagePolicyName', 'string'),
  4: f('storagePolicyID', 'string'),
};
const QUOBYTE_VOLUME_SOURCE: Message = {
  1: f('registry', 'string'),
  2: f('volume', 'string'),
  3: f('readOnly', 'bool'),
  4: f('user', 'string'),
  5: f('group', 'string'),
  6: f('tenant', 'string'),
};
const AZURE_DISK_VOLUME_SOURCE: Message = {
  1: f('diskName', 'string'),
  2: f('diskURI', 'string'),
  3: f('cachingMode', 'string', { pointer: true }),
  4: f('fsType', 'string', { pointer: true }),
  5: f('readOnly', 'bool', { pointer: true }),
  6: f('kind', 'string', { pointer: true }),
};
const PHOTON_PERSISTENT_DISK_VOLUME_SOURCE: Message = {
  1: f('pdID', 'string'),
  2: f('fsType', 'string'),
};
const SECRET_PROJECTION: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('items', KEY_TO_PATH, { repeated: true }),
  4: f('optional', 'bool', { pointer: true }),
};
const DOWNWARD_API_PROJECTION: Message = {
  1: f('items', DOWNWARD_API_VOLUME_FILE, { repeated: true }),
};
const CONFIG_MAP_PROJECTION: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('items', KEY_TO_PATH, { repeated: true }),
  4: f('optional', 'bool', { pointer: true }),
};
const SERVICE_ACCOUNT_TOKEN_PROJECTION: Message = {
  1: f('audience', 'string'),
  2: f('expirationSeconds', 'int', { pointer: true }),
  3: f('path', 'string'),
};
const CLUSTER_TRUST_BUNDLE_PROJECTION: Message = {
  1: f('name', 'string', { pointer: true }),
  2: f('signerName', 'string', { pointer: true }),
  3: f('labelSelector', LABEL_SELECTOR, { pointer: true }),
  5: f('optional', 'bool', { pointer: true }),
  4: f('path', 'string'),
};
const VOLUME_PROJECTION: Message = {
  1: f('secret', SECRET_PROJECTION, { pointer: true }),
  2: f('downwardAPI', DOWNWARD_API_PROJECTION, { pointer: true }),
  3: f('configMap', CONFIG_MAP_PROJECTION, { pointer: true }),
  4: f('serviceAccountToken', SERVICE_ACCOUNT_TOKEN_PROJECTION, { pointer: true }),
  5: f('clusterTrustBundle', CLUSTER_TRUST_BUNDLE_PROJECTION, { pointer: true }),
};
const PROJECTED_VOLUME_SOURCE: Message = {
  1: f('sources', VOLUME_PROJECTION, { repeated: true }),
  2: f('defaultMode', 'int', { pointer: true }),
};
const PORTWORX_VOLUME_SOURCE: Message = {
  1: f('volumeID', 'string'),
  2: f('fsType', 'string'),
  3: f('readOnly', 'bool'),
};
const SCALE_IO_VOLUME_SOURCE: Message = {
  1: f('gateway', 'string'),
  2: f('system', 'string'),
  3: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
  4: f('sslEnabled', 'bool'),
  5: f('protectionDomain', 'string'),
  6: f('storagePool', 'string'),
  7: f('storageMode', 'string'),
  8: f('volumeName', 'string'),
  9: f('fsType', 'string'),
  10: f('readOnly', 'bool'),
};
const STORAGE_OS_VOLUME_SOURCE: Message = {
  1: f('volumeName', 'string'),
  2: f('volumeNamespace', 'string'),
  3: f('fsType', 'string'),
  4: f('readOnly', 'bool'),
  5: f('secretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
};
const CSI_VOLUME_SOURCE: Message = {
  1: f('driver', 'string'),
  2: f('readOnly', 'bool', { pointer: true }),
  3: f('fsType', 'string', { pointer: true }),
  4: f('volumeAttributes', { map: 'string' }),
  5: f('nodePublishSecretRef', LOCAL_OBJECT_REFERENCE, { pointer: true }),
};
const VOLUME_RESOURCE_REQUIREMENTS: Message = {
  1: f('limits', { map: 'quantity' }),
  2: f('requests', { map: 'quantity' }),
};
const TYPED_LOCAL_OBJECT_REFERENCE: Message = {
  1: f('apiGroup', 'string', { pointer: true }),
  2: f('kind', 'string'),
  3: f('name', 'string'),
};
const TYPED_OBJECT_REFERENCE: Message = {
  1: f('apiGroup', 'string', { pointer: true }),
  2: f('kind', 'string'),
  3: f('name', 'string'),
  4: f('namespace', 'string', { pointer: true }),
};
const PERSISTENT_VOLUME_CLAIM_SPEC: Message = {
  1: f('accessModes', 'string', { repeated: true }),
  4: f('selector', LABEL_SELECTOR, { pointer: true }),
  2: f('resources', VOLUME_RESOURCE_REQUIREMENTS),
  3: f('volumeName', 'string'),
  5: f('storageClassName', 'string', { pointer: true }),
  6: f('volumeMode', 'string', { pointer: true }),
  7: f('dataSource', TYPED_LOCAL_OBJECT_REFERENCE, { pointer: true }),
  8: f('dataSourceRef', TYPED_OBJECT_REFERENCE, { pointer: true }),
  9: f('volumeAttributesClassName', 'string', { pointer: true }),
};
const PERSISTENT_VOLUME_CLAIM_TEMPLATE: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', PERSISTENT_VOLUME_CLAIM_SPEC),
};
const EPHEMERAL_VOLUME_SOURCE: Message = {
  1: f('volumeClaimTemplate', PERSISTENT_VOLUME_CLAIM_TEMPLATE, { pointer: true }),
};
const IMAGE_VOLUME_SOURCE: Message = {
  1: f('reference', 'string'),
  2: f('pullPolicy', 'string'),
};
const VOLUME_SOURCE: Message = {
  1: f('hostPath', HOST_PATH_VOLUME_SOURCE, { pointer: true }),
  2: f('emptyDir', EMPTY_DIR_VOLUME_SOURCE, { pointer: true }),
  3: f('gcePersistentDisk', GCE_PERSISTENT_DISK_VOLUME_SOURCE, { pointer: true }),
  4: f('awsElasticBlockStore', AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE, { pointer: true }),
  5: f('gitRepo', GIT_REPO_VOLUME_SOURCE, { pointer: true }),
  6: f('secret', SECRET_VOLUME_SOURCE, { pointer: true }),
  7: f('nfs', NFS_VOLUME_SOURCE, { pointer: true }),
  8: f('iscsi', ISCSI_VOLUME_SOURCE, { pointer: true }),
  9: f('glusterfs', GLUSTERFS_VOLUME_SOURCE, { pointer: true }),
  10: f('persistentVolumeClaim', PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE, { pointer: true }),
  11: f('rbd', RBD_VOLUME_SOURCE, { pointer: true }),
  12: f('flexVolume', FLEX_VOLUME_SOURCE, { pointer: true }),
  13: f('cinder', CINDER_VOLUME_SOURCE, { pointer: true }),
  14: f('cephfs', CEPH_FS_VOLUME_SOURCE, { pointer: true }),
  15: f('flocker', FLOCKER_VOLUME_SOURCE, { pointer: true }),
  16: f('downwardAPI', DOWNWARD_API_VOLUME_SOURCE, { pointer: true }),
  17: f('fc', FC_VOLUME_SOURCE, { pointer: true }),
  18: f('azureFile', AZURE_FILE_VOLUME_SOURCE, { pointer: true }),
  19: f('configMap', CONFIG_MAP_VOLUME_SOURCE, { pointer: true }),
  20: f('vsphereVolume', VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE, { pointer: true }),
  21: f('quobyte', QUOBYTE_VOLUME_SOURCE, { pointer: true }),
  22: f('azureDisk', AZURE_DISK_VOLUME_SOURCE, { pointer: true }),
  23: f('photonPersistentDisk', PHOTON_PERSISTENT_DISK_VOLUME_SOURCE, { pointer: true }),
  26: f('projected', PROJECTED_VOLUME_SOURCE, { pointer: true }),
  24: f('portworxVolume', PORTWORX_VOLUME_SOURCE, { pointer: true }),
  25: f('scaleIO', SCALE_IO_VOLUME_SOURCE, { pointer: true }),
  27: f('storageos', STORAGE_OS_VOLUME_SOURCE, { pointer: true }),
  28: f('csi', CSI_VOLUME_SOURCE, { pointer: true }),
  29: f('ephemeral', EPHEMERAL_VOLUME_SOURCE, { pointer: true }),
  30: f('image', IMAGE_VOLUME_SOURCE, { pointer: true }),
};
const VOLUME: Message = {
  1: f('name', 'string'),
  2: f('volumeSource', VOLUME_SOURCE, { inline: true }),
};
const CONTAINER_PORT: Message = {
  1: f('name', 'string'),
  2: f('hostPort', 'int'),
  3: f('containerPort', 'int'),
  4: f('protocol', 'string'),
  5: f('hostIP', 'string'),
};
const CONFIG_MAP_ENV_SOURCE: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('optional', 'bool', { pointer: true }),
};
const SECRET_ENV_SOURCE: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('optional', 'bool', { pointer: true }),
};
const ENV_FROM_SOURCE: Message = {
  1: f('prefix', 'string'),
  2: f('configMapRef', CONFIG_MAP_ENV_SOURCE, { pointer: true }),
  3: f('secretRef', SECRET_ENV_SOURCE, { pointer: true }),
};
const CONFIG_MAP_KEY_SELECTOR: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('key', 'string'),
  3: f('optional', 'bool', { pointer: true }),
};
const SECRET_KEY_SELECTOR: Message = {
  1: f('localObjectReference', LOCAL_OBJECT_REFERENCE, { inline: true }),
  2: f('key', 'string'),
  3: f('optional', 'bool', { pointer: true }),
};
const ENV_VAR_SOURCE: Message = {
  1: f('fieldRef', OBJECT_FIELD_SELECTOR, { pointer: true }),
  2: f('resourceFieldRef', RESOURCE_FIELD_SELECTOR, { pointer: true }),
  3: f('configMapKeyRef', CONFIG_MAP_KEY_SELECTOR, { pointer: true }),
  4: f('secretKeyRef', SECRET_KEY_SELECTOR, { pointer: true }),
};
const ENV_VAR: Message = {
  1: f('name', 'string'),
  2: f('value', 'string'),
  3: f('valueFrom', ENV_VAR_SOURCE, { pointer: true }),
};
const RESOURCE_CLAIM: Message = {
  1: f('name', 'string'),
  2: f('request', 'string'),
};
const RESOURCE_REQUIREMENTS: Message = {
  1: f('limits', { map: 'quantity' }),
  2: f('requests', { map: 'quantity' }),
  3: f('claims', RESOURCE_CLAIM, { repeated: true }),
};
const CONTAINER_RESIZE_POLICY: Message = {
  1: f('resourceName', 'string'),
  2: f('restartPolicy', 'string'),
};
const VOLUME_MOUNT: Message = {
  1: f('name', 'string'),
  2: f('readOnly', 'bool'),
  7: f('recursiveReadOnly', 'string', { pointer: true }),
  3: f('mountPath', 'string'),
  4: f('subPath', 'string'),
  5: f('mountPropagation', 'string', { pointer: true }),
  6: f('subPathExpr', 'string'),
};
const VOLUME_DEVICE: Message = {
  1: f('name', 'string'),
  2: f('devicePath', 'string'),
};
const EXEC_ACTION: Message = {
  1: f('command', 'string', { repeated: true }),
};
const HTTP_HEADER: Message = {
  1: f('name', 'string'),
  2: f('value', 'string'),
};
const HTTP_GET_ACTION: Message = {
  1: f('path', 'string'),
  2: f('port', 'intstr'),
  3: f('host', 'string'),
  4: f('scheme', 'string'),
  5: f('httpHeaders', HTTP_HEADER, { repeated: true }),
};
const TCP_SOCKET_ACTION: Message = {
  1: f('port', 'intstr'),
  2: f('host', 'string'),
};
const GRPC_ACTION: Message = {
  1: f('port', 'int'),
  2: f('service', 'string', { pointer: true }),
};
const PROBE_HANDLER: Message = {
  1: f('exec', EXEC_ACTION, { pointer: true }),
  2: f('httpGet', HTTP_GET_ACTION, { pointer: true }),
  3: f('tcpSocket', TCP_SOCKET_ACTION, { pointer: true }),
  4: f('grpc', GRPC_ACTION, { pointer: true }),
};
const PROBE: Message = {
  1: f('handler', PROBE_HANDLER, { inline: true }),
  2: f('initialDelaySeconds', 'int'),
  3: f('timeoutSeconds', 'int'),
  4: f('periodSeconds', 'int'),
  5: f('successThreshold', 'int'),
  6: f('failureThreshold', 'int'),
  7: f('terminationGracePeriodSeconds', 'int', { pointer: true }),
};
const SLEEP_ACTION: Message = {
  1: f('seconds', 'int'),
};
const LIFECYCLE_HANDLER: Message = {
  1: f('exec', EXEC_ACTION, { pointer: true }),
  2: f('httpGet', HTTP_GET_ACTION, { pointer: true }),
  3: f('tcpSocket', TCP_SOCKET_ACTION, { pointer: true }),
  4: f('sleep', SLEEP_ACTION, { pointer: true }),
};
const LIFECYCLE: Message = {
  1: f('postStart', LIFECYCLE_HANDLER, { pointer: true }),
  2: f('preStop', LIFECYCLE_HANDLER, { pointer: true }),
};
const CAPABILITIES: Message = {
  1: f('add', 'string', { repeated: true }),
  2: f('drop', 'string', { repeated: true }),
};
const SE_LINUX_OPTIONS: Message = {
  1: f('user', 'string'),
  2: f('role', 'string'),
  3: f('type', 'string'),
  4: f('level', 'string'),
};
const WINDOWS_SECURITY_CONTEXT_OPTIONS: Message = {
  1: f('gmsaCredentialSpecName', 'string', { pointer: true }),
  2: f('gmsaCredentialSpec', 'string', { pointer: true }),
  3: f('runAsUserName', 'string', { pointer: true }),
  4: f('hostProcess', 'bool', { pointer: true }),
};
const SECCOMP_PROFILE: Message = {
  1: f('type', 'string'),
  2: f('localhostProfile', 'string', { pointer: true }),
};
const APP_ARMOR_PROFILE: Message = {
  1: f('type', 'string'),
  2: f('localhostProfile', 'string', { pointer: true }),
};
const SECURITY_CONTEXT: Message = {
  1: f('capabilities', CAPABILITIES, { pointer: true }),
  2: f('privileged', 'bool', { pointer: true }),
  3: f('seLinuxOptions', SE_LINUX_OPTIONS, { pointer: true }),
  10: f('windowsOptions', WINDOWS_SECURITY_CONTEXT_OPTIONS, { pointer: true }),
  4: f('runAsUser', 'int', { pointer: true }),
  8: f('runAsGroup', 'int', { pointer: true }),
  5: f('runAsNonRoot', 'bool', { pointer: true }),
  6: f('readOnlyRootFilesystem', 'bool', { pointer: true }),
  7: f('allowPrivilegeEscalation', 'bool', { pointer: true }),
  9: f('procMount', 'string', { pointer: true }),
  11: f('seccompProfile', SECCOMP_PROFILE, { pointer: true }),
  12: f('appArmorProfile', APP_ARMOR_PROFILE, { pointer: true }),
};
const CONTAINER: Message = {
  1: f('name', 'string'),
  2: f('image', 'string'),
  3: f('command', 'string', { repeated: true }),
  4: f('args', 'string', { repeated: true }),
  5: f('workingDir', 'string'),
  6: f('ports', CONTAINER_PORT, { repeated: true }),
  19: f('envFrom', ENV_FROM_SOURCE, { repeated: true }),
  7: f('env', ENV_VAR, { repeated: true }),
  8: f('resources', RESOURCE_REQUIREMENTS),
  23: f('resizePolicy', CONTAINER_RESIZE_POLICY, { repeated: true }),
  24: f('restartPolicy', 'string', { pointer: true }),
  9: f('volumeMounts', VOLUME_MOUNT, { repeated: true }),
  21: f('volumeDevices', VOLUME_DEVICE, { repeated: true }),
  10: f('livenessProbe', PROBE, { pointer: true }),
  11: f('readinessProbe', PROBE, { pointer: true }),
  22: f('startupProbe', PROBE, { pointer: true }),
  12: f('lifecycle', LIFECYCLE, { pointer: true }),
  13: f('terminationMessagePath', 'string'),
  20: f('terminationMessagePolicy', 'string'),
  14: f('imagePullPolicy', 'string'),
  15: f('securityContext', SECURITY_CONTEXT, { pointer: true }),
  16: f('stdin', 'bool'),
  17: f('stdinOnce', 'bool'),
  18: f('tty', 'bool'),
};
const EPHEMERAL_CONTAINER_COMMON: Message = {
  1: f('name', 'string'),
  2: f('image', 'string'),
  3: f('command', 'string', { repeated: true }),
  4: f('args', 'string', { repeated: true }),
  5: f('workingDir', 'string'),
  6: f('ports', CONTAINER_PORT, { repeated: true }),
  19: f('envFrom', ENV_FROM_SOURCE, { repeated: true }),
  7: f('env', ENV_VAR, { repeated: true }),
  8: f('resources', RESOURCE_REQUIREMENTS),
  23: f('resizePolicy', CONTAINER_RESIZE_POLICY, { repeated: true }),
  24: f('restartPolicy', 'string', { pointer: true }),
  9: f('volumeMounts', VOLUME_MOUNT, { repeated: true }),
  21: f('volumeDevices', VOLUME_DEVICE, { repeated: true }),
  10: f('livenessProbe', PROBE, { pointer: true }),
  11: f('readinessProbe', PROBE, { pointer: true }),
  22: f('startupProbe', PROBE, { pointer: true }),
  12: f('lifecycle', LIFECYCLE, { pointer: true }),
  13: f('terminationMessagePath', 'string'),
  20: f('terminationMessagePolicy', 'string'),
  14: f('imagePullPolicy', 'string'),
  15: f('securityContext', SECURITY_CONTEXT, { pointer: true }),
  16: f('stdin', 'bool'),
  17: f('stdinOnce', 'bool'),
  18: f('tty', 'bool'),
};
const EPHEMERAL_CONTAINER: Message = {
  1: f('ephemeralContainerCommon', EPHEMERAL_CONTAINER_COMMON, { inline: true }),
  2: f('targetContainerName', 'string'),
};
const SYSCTL: Message = {
  1: f('name', 'string'),
  2: f('value', 'string'),
};
const POD_SECURITY_CONTEXT: Message = {
  1: f('seLinuxOptions', SE_LINUX_OPTIONS, { pointer: true }),
  8: f('windowsOptions', WINDOWS_SECURITY_CONTEXT_OPTIONS, { pointer: true }),
  2: f('runAsUser', 'int', { pointer: true }),
  6: f('runAsGroup', 'int', { pointer: true }),
  3: f('runAsNonRoot', 'bool', { pointer: true }),
  4: f('supplementalGroups', 'int', { repeated: true }),
  12: f('supplementalGroupsPolicy', 'string', { pointer: true }),
  5: f('fsGroup', 'int', { pointer: true }),
  7: f('sysctls', SYSCTL, { repeated: true }),
  9: f('fsGroupChangePolicy', 'string', { pointer: true }),
  10: f('seccompProfile', SECCOMP_PROFILE, { pointer: true }),
  11: f('appArmorProfile', APP_ARMOR_PROFILE, { pointer: true }),
  13: f('seLinuxChangePolicy', 'string', { pointer: true }),
};
const NODE_SELECTOR_REQUIREMENT: Message = {
  1: f('key', 'string'),
  2: f('operator', 'string'),
  3: f('values', 'string', { repeated: true }),
};
const NODE_SELECTOR_TERM: Message = {
  1: f('matchExpressions', NODE_SELECTOR_REQUIREMENT, { repeated: true }),
  2: f('matchFields', NODE_SELECTOR_REQUIREMENT, { repeated: true }),
};
const NODE_SELECTOR: Message = {
  1: f('nodeSelectorTerms', NODE_SELECTOR_TERM, { repeated: true }),
};
const PREFERRED_SCHEDULING_TERM: Message = {
  1: f('weight', 'int'),
  2: f('preference', NODE_SELECTOR_TERM),
};
const NODE_AFFINITY: Message = {
  1: f('requiredDuringSchedulingIgnoredDuringExecution', NODE_SELECTOR, { pointer: true }),
  2: f('preferredDuringSchedulingIgnoredDuringExecution', PREFERRED_SCHEDULING_TERM, { repeated: true }),
};
const POD_AFFINITY_TERM: Message = {
  1: f('labelSelector', LABEL_SELECTOR, { pointer: true }),
  2: f('namespaces', 'string', { repeated: true }),
  3: f('topologyKey', 'string'),
  4: f('namespaceSelector', LABEL_SELECTOR, { pointer: true }),
  5: f('matchLabelKeys', 'string', { repeated: true }),
  6: f('mismatchLabelKeys', 'string', { repeated: true }),
};
const WEIGHTED_POD_AFFINITY_TERM: Message = {
  1: f('weight', 'int'),
  2: f('podAffinityTerm', POD_AFFINITY_TERM),
};
const POD_AFFINITY: Message = {
  1: f('requiredDuringSchedulingIgnoredDuringExecution', POD_AFFINITY_TERM, { repeated: true }),
  2: f('preferredDuringSchedulingIgnoredDuringExecution', WEIGHTED_POD_AFFINITY_TERM, { repeated: true }),
};
const POD_ANTI_AFFINITY: Message = {
  1: f('requiredDuringSchedulingIgnoredDuringExecution', POD_AFFINITY_TERM, { repeated: true }),
  2: f('preferredDuringSchedulingIgnoredDuringExecution', WEIGHTED_POD_AFFINITY_TERM, { repeated: true }),
};
const AFFINITY: Message = {
  1: f('nodeAffinity', NODE_AFFINITY, { pointer: true }),
  2: f('podAffinity', POD_AFFINITY, { pointer: true }),
  3: f('podAntiAffinity', POD_ANTI_AFFINITY, { pointer: true }),
};
const TOLERATION: Message = {
  1: f('key', 'string'),
  2: f('operator', 'string'),
  3: f('value', 'string'),
  4: f('effect', 'string'),
  5: f('tolerationSeconds', 'int', { pointer: true }),
};
const HOST_ALIAS: Message = {
  1: f('ip', 'string'),
  2: f('hostnames', 'string', { repeated: true }),
};
const POD_DNS_CONFIG_OPTION: Message = {
  1: f('name', 'string'),
  2: f('value', 'string', { pointer: true }),
};
const POD_DNS_CONFIG: Message = {
  1: f('nameservers', 'string', { repeated: true }),
  2: f('searches', 'string', { repeated: true }),
  3: f('options', POD_DNS_CONFIG_OPTION, { repeated: true }),
};
const POD_READINESS_GATE: Message = {
  1: f('conditionType', 'string'),
};
const TOPOLOGY_SPREAD_CONSTRAINT: Message = {
  1: f('maxSkew', 'int'),
  2: f('topologyKey', 'string'),
  3: f('whenUnsatisfiable', 'string'),
  4: f('labelSelector', LABEL_SELECTOR, { pointer: true }),
  5: f('minDomains', 'int', { pointer: true }),
  6: f('nodeAffinityPolicy', 'string', { pointer: true }),
  7: f('nodeTaintsPolicy', 'string', { pointer: true }),
  8: f('matchLabelKeys', 'string', { repeated: true }),
};
const POD_OS: Message = {
  1: f('name', 'string'),
};
const POD_SCHEDULING_GATE: Message = {
  1: f('name', 'string'),
};
const POD_RESOURCE_CLAIM: Message = {
  1: f('name', 'string'),
  3: f('resourceClaimName', 'string', { pointer: true }),
  4: f('resourceClaimTemplateName', 'string', { pointer: true }),
};
const POD_SPEC: Message = {
  1: f('volumes', VOLUME, { repeated: true }),
  20: f('initContainers', CONTAINER, { repeated: true }),
  2: f('containers', CONTAINER, { repeated: true }),
  34: f('ephemeralContainers', EPHEMERAL_CONTAINER, { repeated: true }),
  3: f('restartPolicy', 'string'),
  4: f('terminationGracePeriodSeconds', 'int', { pointer: true }),
  5: f('activeDeadlineSeconds', 'int', { pointer: true }),
  6: f('dnsPolicy', 'string'),
  7: f('nodeSelector', { map: 'string' }),
  8: f('serviceAccountName', 'string'),
  9: f('serviceAccount', 'string'),
  21: f('automountServiceAccountToken', 'bool', { pointer: true }),
  10: f('nodeName', 'string'),
  11: f('hostNetwork', 'bool'),
  12: f('hostPID', 'bool'),
  13: f('hostIPC', 'bool'),
  27: f('shareProcessNamespace', 'bool', { pointer: true }),
  14: f('securityContext', POD_SECURITY_CONTEXT, { pointer: true }),
  15: f('imagePullSecrets', LOCAL_OBJECT_REFERENCE, { repeated: true }),
  16: f('hostname', 'string'),
  17: f('subdomain', 'string'),
  18: f('affinity', AFFINITY, { pointer: true }),
  19: f('schedulerName', 'string'),
  22: f('tolerations', TOLERATION, { repeated: true }),
  23: f('hostAliases', HOST_ALIAS, { repeated: true }),
  24: f('priorityClassName', 'string'),
  25: f('priority', 'int', { pointer: true }),
  26: f('dnsConfig', POD_DNS_CONFIG, { pointer: true }),
  28: f('readinessGates', POD_READINESS_GATE, { repeated: true }),
  29: f('runtimeClassName', 'string', { pointer: true }),
  30: f('enableServiceLinks', 'bool', { pointer: true }),
  31: f('preemptionPolicy', 'string', { pointer: true }),
  32: f('overhead', { map: 'quantity' }),
  33: f('topologySpreadConstraints', TOPOLOGY_SPREAD_CONSTRAINT, { repeated: true }),
  35: f('setHostnameAsFQDN', 'bool', { pointer: true }),
  36: f('os', POD_OS, { pointer: true }),
  37: f('hostUsers', 'bool', { pointer: true }),
  38: f('schedulingGates', POD_SCHEDULING_GATE, { repeated: true }),
  39: f('resourceClaims', POD_RESOURCE_CLAIM, { repeated: true }),
  40: f('resources', RESOURCE_REQUIREMENTS, { pointer: true }),
};
const POD_CONDITION: Message = {
  1: f('type', 'string'),
  2: f('status', 'string'),
  3: f('lastProbeTime', 'time'),
  4: f('lastTransitionTime', 'time'),
  5: f('reason', 'string'),
  6: f('message', 'string'),
};
const HOST_IP: Message = {
  1: f('ip', 'string'),
};
const POD_IP: Message = {
  1: f('ip', 'string'),
};
const CONTAINER_STATE_WAITING: Message = {
  1: f('reason', 'string'),
  2: f('message', 'string'),
};
const CONTAINER_STATE_RUNNING: Message = {
  1: f('startedAt', 'time'),
};
const CONTAINER_STATE_TERMINATED: Message = {
  1: f('exitCode', 'int'),
  2: f('signal', 'int'),
  3: f('reason', 'string'),
  4: f('message', 'string'),
  5: f('startedAt', 'time'),
  6: f('finishedAt', 'time'),
  7: f('containerID', 'string'),
};
const CONTAINER_STATE: Message = {
  1: f('waiting', CONTAINER_STATE_WAITING, { pointer: true }),
  2: f('running', CONTAINER_STATE_RUNNING, { pointer: true }),
  3: f('terminated', CONTAINER_STATE_TERMINATED, { pointer: true }),
};
const VOLUME_MOUNT_STATUS: Message = {
  1: f('name', 'string'),
  2: f('mountPath', 'string'),
  3: f('readOnly', 'bool'),
  4: f('recursiveReadOnly', 'string', { pointer: true }),
};
const LINUX_CONTAINER_USER: Message = {
  1: f('uid', 'int'),
  2: f('gid', 'int'),
  3: f('supplementalGroups', 'int', { repeated: true }),
};
const CONTAINER_USER: Message = {
  1: f('linux', LINUX_CONTAINER_USER, { pointer: true }),
};
const RESOURCE_HEALTH: Message = {
  1: f('resourceID', 'string'),
  2: f('health', 'string'),
};
const RESOURCE_STATUS: Message = {
  1: f('name', 'string'),
  2: f('resources', RESOURCE_HEALTH, { repeated: true }),
};
const CONTAINER_STATUS: Message = {
  1: f('name', 'string'),
  2: f('state', CONTAINER_STATE),
  3: f('lastState', CONTAINER_STATE),
  4: f('ready', 'bool'),
  5: f('restartCount', 'int'),
  6: f('image', 'string'),
  7: f('imageID', 'string'),
  8: f('containerID', 'string'),
  9: f('started', 'bool', { pointer: true }),
  10: f('allocatedResources', { map: 'quantity' }),
  11: f('resources', RESOURCE_REQUIREMENTS, { pointer: true }),
  12: f('volumeMounts', VOLUME_MOUNT_STATUS, { repeated: true }),
  13: f('user', CONTAINER_USER, { pointer: true }),
  14: f('allocatedResourcesStatus', RESOURCE_STATUS, { repeated: true }),
};
const POD_RESOURCE_CLAIM_STATUS: Message = {
  1: f('name', 'string'),
  2: f('resourceClaimName', 'string', { pointer: true }),
};
const POD_STATUS: Message = {
  1: f('phase', 'string'),
  2: f('conditions', POD_CONDITION, { repeated: true }),
  3: f('message', 'string'),
  4: f('reason', 'string'),
  11: f('nominatedNodeName', 'string'),
  5: f('hostIP', 'string'),
  16: f('hostIPs', HOST_IP, { repeated: true }),
  6: f('podIP', 'string'),
  12: f('podIPs', POD_IP, { repeated: true }),
  7: f('startTime', 'time', { pointer: true }),
  10: f('initContainerStatuses', CONTAINER_STATUS, { repeated: true }),
  8: f('containerStatuses', CONTAINER_STATUS, { repeated: true }),
  9: f('qosClass', 'string'),
  13: f('ephemeralContainerStatuses', CONTAINER_STATUS, { repeated: true }),
  14: f('resize', 'string'),
  15: f('resourceClaimStatuses', POD_RESOURCE_CLAIM_STATUS, { repeated: true }),
};
export const POD: Message = {
  1: f('metadata', OBJECT_META),
  2: f('spec', POD_SPEC),
  3: f('status', POD_STATUS),
};
