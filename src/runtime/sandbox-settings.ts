/**
 * Pod settings of a `berth serve` container (resources, node selector, service account, pull policy,
 * name prefix, extra labels and annotations), read from `berth.dev/…` keys. The same keys come from
 * the operator's flags (as defaults) and from the container's own labels, which win: one parser for both,
 * so a flag and a label can never mean different things. Pure.
 */
import { SandboxPlanError } from './sandbox-plan.js';

export type ResourceName = 'cpu' | 'memory' | 'ephemeral-storage';
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

export interface PodSettings {
  requests?: Partial<Record<ResourceName, string>>;
  limits?: Partial<Record<ResourceName, string>>;
  nodeSelector?: Record<string, string>;
  serviceAccount?: string;
  pullPolicy?: PullPolicy;
  namePrefix?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const SETTINGS_PREFIX = 'berth.dev/';
const RESOURCES: ResourceName[] = ['cpu', 'memory', 'ephemeral-storage'];

/** Every key this module reads, e.g. `berth.dev/request-cpu`. */
export const SETTING_KEYS = {
  ...Object.fromEntries(
    RESOURCES.flatMap((r) => [
      [`request-${r}`, `${SETTINGS_PREFIX}request-${r}`],
      [`limit-${r}`, `${SETTINGS_PREFIX}limit-${r}`],
    ]),
  ),
  nodeSelector: `${SETTINGS_PREFIX}node-selector`,
  serviceAccount: `${SETTINGS_PREFIX}service-account`,
  pullPolicy: `${SETTINGS_PREFIX}pull-policy`,
  namePrefix: `${SETTINGS_PREFIX}name-prefix`,
  podLabels: `${SETTINGS_PREFIX}pod-labels`,
  podAnnotations: `${SETTINGS_PREFIX}pod-annotations`,
} as const;

// Kubernetes' quantity grammar, without the rarely used exponent forms.
const QUANTITY = /^(\d+(\.\d+)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const NAME_PREFIX = /^[a-z0-9][-a-z0-9]{0,19}$/;
const PULL_POLICIES: PullPolicy[] = ['Always', 'IfNotPresent', 'Never'];

/**
 * Settings from `berth.dev/…` keys; other keys are ignored. Later sources win key by key, so
 * `podSettingsFrom(flagDefaults, containerLabels)` lets a container's label replace the flag's value.
 */
export function podSettingsFrom(...sources: Array<Record<string, string> | null | undefined>): PodSettings {
  const v: Record<string, string> = Object.assign({}, ...sources.map((s) => s ?? {}));
  const out: PodSettings = {};
  for (const kind of ['request', 'limit'] as const) {
    const amounts: Partial<Record<ResourceName, string>> = {};
    for (const r of RESOURCES) {
      const key = `${SETTINGS_PREFIX}${kind}-${r}`;
      const q = v[key]?.trim();
      if (!q) continue;
      if (!QUANTITY.test(q)) throw new SandboxPlanError(`${key}="${q}" is not a Kubernetes quantity (e.g. 250m, 0.5, 64Mi, 1Gi)`);
      amounts[r] = q;
    }
    if (Object.keys(amounts).length) out[kind === 'request' ? 'requests' : 'limits'] = amounts;
  }
  const selector = v[SETTING_KEYS.nodeSelector];
  if (selector) out.nodeSelector = parsePairs(SETTING_KEYS.nodeSelector, selector);
  const sa = v[SETTING_KEYS.serviceAccount]?.trim();
  if (sa) {
    if (!DNS_SUBDOMAIN.test(sa)) throw new SandboxPlanError(`${SETTING_KEYS.serviceAccount}="${sa}" is not a valid service account name`);
    out.serviceAccount = sa;
  }
  const policy = v[SETTING_KEYS.pullPolicy]?.trim();
  if (policy) {
    const match = PULL_POLICIES.find((p) => p.toLowerCase() === policy.toLowerCase());
    if (!match) throw new SandboxPlanError(`${SETTING_KEYS.pullPolicy}="${policy}" must be one of ${PULL_POLICIES.join(', ')}`);
    out.pullPolicy = match;
  }
  const prefix = v[SETTING_KEYS.namePrefix]?.trim();
  if (prefix) {
    if (!NAME_PREFIX.test(prefix))
      throw new SandboxPlanError(
        `${SETTING_KEYS.namePrefix}="${prefix}" must be at most 20 lower-case letters, digits and '-', starting with a letter or digit`,
      );
    out.namePrefix = prefix;
  }
  if (v[SETTING_KEYS.podLabels]) out.labels = parsePairs(SETTING_KEYS.podLabels, v[SETTING_KEYS.podLabels]);
  if (v[SETTING_KEYS.podAnnotations]) out.annotations = parsePairs(SETTING_KEYS.podAnnotations, v[SETTING_KEYS.podAnnotations]);
  return out;
}

/** `k=v,k=v` (spaces around items ignored); an empty value is allowed, a missing `=` is not. */
export function parsePairs(key: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new SandboxPlanError(`${key}: "${item}" is not k=v (expected k=v,k=v)`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}
