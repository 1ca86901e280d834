// The dev cluster's users file: who may call the API, with which token, groups and directly granted rules.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** An RBAC PolicyRule plus `namespaces`, which limits where a resource rule applies (absent = everywhere). */
export interface FileRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  namespaces?: string[];
}

export interface UserSpec {
  name: string;
  token: string;
  groups: string[];
  rules: FileRule[];
}

export const RESERVED_USER = 'admin';

class UsersFileError extends Error {}

export function loadUsersFile(path: string): UserSpec[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsersFileError(`users file ${path}: cannot read: ${(err as Error).message}`);
  }
  return parseUsers(text, path);
}

/** Validates the YAML text of a users file; `source` names it in error messages. */
export function parseUsers(text: string, source: string): UserSpec[] {
  const fail = (field: string, problem: string): never => {
    throw new UsersFileError(`users file ${source}: ${field}: ${problem}`);
  };
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return fail('(document)', `not valid YAML: ${(err as Error).message}`);
  }
  if (!isRecord(doc)) return fail('(document)', 'must be a mapping with a "users" list');
  checkKeys(doc, ['users'], '(document)', fail);
  if (!Array.isArray(doc.users)) return fail('users', 'must be a list');

  const seen = new Set<string>();
  return doc.users.map((raw, i) => {
    const at = `users[${i}]`;
    if (!isRecord(raw)) return fail(at, 'must be a mapping');
    checkKeys(raw, ['name', 'token', 'groups', 'rules'], at, fail);
    if (typeof raw.name !== 'string' || raw.name.trim() === '') return fail(`${at}.name`, 'required, a non-empty string');
    if (raw.name === RESERVED_USER) fail(`${at}.name`, `"${RESERVED_USER}" is reserved for the cluster administrator`);
    if (seen.has(raw.name)) fail(`${at}.name`, `duplicate user "${raw.name}"`);
    seen.add(raw.name);
    let token: string;
    if (raw.token === undefined || raw.token === null) token = randomBytes(16).toString('hex');
    else if (typeof raw.token === 'string' && raw.token !== '' && !/\s/.test(raw.token)) token = raw.token;
    else return fail(`${at}.token`, 'must be a non-empty string without whitespace');
    const groups = stringList(raw.groups, `${at}.groups`, fail) ?? [];
    if (raw.rules !== undefined && raw.rules !== null && !Array.isArray(raw.rules)) fail(`${at}.rules`, 'must be a list');
    const rules = ((raw.rules as unknown[] | null | undefined) ?? []).map((r, j) => parseRule(r, `${at}.rules[${j}]`, fail));
    return { name: raw.name, token, groups, rules };
  });
}

function parseRule(raw: unknown, at: string, fail: (field: string, problem: string) => never): FileRule {
  if (!isRecord(raw)) return fail(at, 'must be a mapping');
  checkKeys(raw, ['apiGroups', 'resources', 'verbs', 'resourceNames', 'nonResourceURLs', 'namespaces'], at, fail);
  const verbs = stringList(raw.verbs, `${at}.verbs`, fail);
  if (!verbs || verbs.length === 0) fail(`${at}.verbs`, 'required, a non-empty list');
  const rule: FileRule = { verbs: verbs! };
  const apiGroups = stringList(raw.apiGroups, `${at}.apiGroups`, fail, true);
  const resources = stringList(raw.resources, `${at}.resources`, fail);
  const resourceNames = stringList(raw.resourceNames, `${at}.resourceNames`, fail);
  const nonResourceURLs = stringList(raw.nonResourceURLs, `${at}.nonResourceURLs`, fail);
  const namespaces = stringList(raw.namespaces, `${at}.namespaces`, fail);
  if (nonResourceURLs && nonResourceURLs.length > 0) {
    if (apiGroups || resources || resourceNames || namespaces) {
      fail(at, 'a rule with nonResourceURLs cannot also have apiGroups, resources, resourceNames or namespaces');
    }
    for (const url of nonResourceURLs) if (!url.startsWith('/') && url !== '*') fail(`${at}.nonResourceURLs`, `"${url}" must start with "/"`);
    rule.nonResourceURLs = nonResourceURLs;
    return rule;
  }
  if (!apiGroups || apiGroups.length === 0) fail(`${at}.apiGroups`, 'required for a resource rule (use [""] for the core group)');
  if (!resources || resources.length === 0) fail(`${at}.resources`, 'required for a resource rule');
  rule.apiGroups = apiGroups!;
  rule.resources = resources!;
  if (resourceNames && resourceNames.length > 0) rule.resourceNames = resourceNames;
  if (namespaces) {
    if (namespaces.length === 0) fail(`${at}.namespaces`, 'an empty list would grant nothing; leave it out for every namespace');
    rule.namespaces = namespaces;
  }
  return rule;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(obj: Record<string, unknown>, allowed: string[], at: string, fail: (field: string, problem: string) => never): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(at === '(document)' ? key : `${at}.${key}`, `unknown field (known: ${allowed.join(', ')})`);
  }
}

function stringList(v: unknown, field: string, fail: (field: string, problem: string) => never, allowEmptyStrings = false): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) return fail(field, 'must be a list of strings');
  for (const item of v) {
    if (typeof item !== 'string' || (!allowEmptyStrings && item === '')) fail(field, `must be a list of ${allowEmptyStrings ? '' : 'non-empty '}strings`);
  }
  return v as string[];
}
