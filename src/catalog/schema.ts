/**
 * JSON schema of KEP-2906's `Catalog` and `KRMFunctionDefinition` (config.kubernetes.io/v1alpha1).
 * Follows the KEP's OpenAPI block, with its `required: [platform]` typo read as the fields it meant,
 * and two berth additions on versions: `deprecated` and `deprecationWarning`.
 */
import { CATALOG_API_VERSION } from './model.js';

const sha256 = { type: 'string', pattern: '^(sha256:)?[0-9a-f]{64}$' };

const execPlatform = {
  type: 'object',
  additionalProperties: false,
  required: ['bin', 'os', 'arch', 'uri', 'sha256'],
  properties: {
    bin: { type: 'string', minLength: 1 },
    os: { enum: ['linux', 'darwin', 'windows'] },
    arch: { enum: ['amd64', 'arm64'] },
    uri: { type: 'string', minLength: 1 },
    sha256,
  },
};

const runtime = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    container: {
      type: 'object',
      additionalProperties: false,
      required: ['image'],
      properties: {
        image: { type: 'string', minLength: 1 },
        sha256,
        requireNetwork: { type: 'boolean' },
        requireStorageMount: { type: 'boolean' },
      },
    },
    exec: {
      type: 'object',
      additionalProperties: false,
      required: ['platforms'],
      properties: { platforms: { type: 'array', minItems: 1, items: execPlatform } },
    },
  },
};

const maintainers = { type: 'array', items: { type: 'string' } };

const version = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'runtime'],
  properties: {
    name: { type: 'string', pattern: '^v[0-9]+((alpha|beta)[0-9]+)?$' },
    deprecated: { type: 'boolean' },
    deprecationWarning: { type: 'string' },
    idempotent: { type: 'boolean' },
    license: { enum: ['Apache 2.0'] },
    usage: { type: 'string' },
    examples: { type: 'array', items: { type: 'string' } },
    maintainers,
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { openAPIV3Schema: { type: 'object' } },
    },
    runtime,
  },
};

export const functionSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['group', 'names', 'description', 'publisher', 'versions'],
  properties: {
    group: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' },
    names: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' } },
    },
    description: { type: 'string' },
    publisher: { type: 'string' },
    home: { type: 'string' },
    maintainers,
    tags: { type: 'array', items: { type: 'string' } },
    versions: { type: 'array', minItems: 1, items: version },
  },
};

const metadata = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

export const catalogDocumentSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: CATALOG_API_VERSION },
    kind: { enum: ['Catalog', 'KRMFunctionDefinition'] },
    metadata,
  },
  if: { properties: { kind: { const: 'Catalog' } } },
  then: {
    properties: {
      spec: {
        type: 'object',
        additionalProperties: false,
        required: ['krmFunctions'],
        properties: { krmFunctions: { type: 'array', items: functionSpecSchema } },
      },
    },
  },
  else: { properties: { spec: functionSpecSchema } },
};
