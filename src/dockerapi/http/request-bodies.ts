/**
 * The JSON bodies berth reads (container create, exec, exec start, network create/connect/disconnect,
 * volume create), checked against the types the Docker Engine API gives their fields: a wrong type is a
 * 400 naming the field (where dockerd's Go decoder says `json: cannot unmarshal ...`), never a 500 or a
 * value silently taken as something else. Fields berth does not read are left to pass, as dockerd ignores
 * unknown ones. A JSON null where the API has a number, string or boolean is that field's zero value, as
 * Go's decoder leaves it (docker-py sends `Healthcheck` with `"Timeout": null` for values not given).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from './http.js';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
const int: Schema = { type: 'integer' };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const strList: Schema = { type: 'array', items: str };
const strMap: Schema = { type: 'object', additionalProperties: str };
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: 'object', properties, required });
/** Cmd, Entrypoint: a list, or (older clients) one string. */
const argv: Schema = nullable({ anyOf: [strList, str] });

const endpointConfig = nullable(obj({ Aliases: nullable(strList) }));

const schemas = {
  create: obj({
    Image: str,
    Cmd: argv,
    Entrypoint: argv,
    Env: nullable(strList),
    Labels: nullable(strMap),
    ExposedPorts: nullable({ type: 'object' }),
    Volumes: nullable({ type: 'object' }),
    WorkingDir: str,
    User: str,
    Hostname: str,
    Domainname: str,
    Tty: bool,
    OpenStdin: bool,
    StdinOnce: bool,
    AttachStdin: bool,
    AttachStdout: bool,
    AttachStderr: bool,
    StopSignal: str,
    StopTimeout: nullable(int),
    Healthcheck: nullable(obj({ Test: nullable(strList), Interval: int, Timeout: int, Retries: int, StartPeriod: int, StartInterval: int })),
    HostConfig: nullable(
      obj({
        PortBindings: nullable({ type: 'object', additionalProperties: nullable({ type: 'array', items: obj({ HostIp: str, HostPort: str }) }) }),
        PublishAllPorts: bool,
        Binds: nullable(strList),
        Mounts: nullable({
          type: 'array',
          items: obj({
            Type: str,
            Source: str,
            Target: str,
            ReadOnly: bool,
            VolumeOptions: nullable(obj({ DriverConfig: nullable(obj({ Name: str, Options: nullable(strMap) })), Labels: nullable(strMap), Subpath: str })),
            TmpfsOptions: nullable(obj({ SizeBytes: int, Mode: int, Options: nullable({ type: 'array', items: strList }) })),
          }),
        }),
        Tmpfs: nullable(strMap),
        ShmSize: int,
        AutoRemove: bool,
        NetworkMode: str,
        Privileged: bool,
        Memory: int,
        NanoCpus: int,
      }),
    ),
    NetworkingConfig: nullable(obj({ EndpointsConfig: nullable({ type: 'object', additionalProperties: endpointConfig }) })),
  }),
  exec: obj({
    Cmd: argv,
    Env: nullable(strList),
    WorkingDir: str,
    User: str,
    Tty: bool,
    AttachStdin: bool,
    AttachStdout: bool,
    AttachStderr: bool,
    Detach: bool,
    Privileged: bool,
    DetachKeys: str,
  }),
  execStart: obj({ Detach: bool, Tty: bool, ConsoleSize: nullable({ type: 'array', items: int }) }),
  networkCreate: obj({
    Name: str,
    Driver: str,
    Labels: nullable(strMap),
    Internal: bool,
    Attachable: bool,
    CheckDuplicate: bool,
    EnableIPv6: bool,
    Options: nullable(strMap),
  }),
  networkConnect: obj({ Container: str, EndpointConfig: endpointConfig }),
  networkDisconnect: obj({ Container: str, Force: bool }),
  volumeCreate: obj({ Name: str, Driver: str, DriverOpts: nullable(strMap), Labels: nullable(strMap) }),
} satisfies Record<string, Schema>;

export type BodyKind = keyof typeof schemas;

const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<BodyKind, ValidateFunction>(Object.entries(schemas).map(([k, s]) => [k as BodyKind, ajv.compile(s)]));

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'a number' : 'a fractional number';
  return `a ${typeof v}`;
}

/** `/HostConfig/Memory` → `HostConfig.Memory`; `/Env/2` → `Env[2]`. */
function fieldName(path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/** The innermost failure is the one that names the field (anyOf reports itself last). */
function describe(err: ErrorObject, body: unknown): string {
  const field = fieldName(err.instancePath) || 'the body';
  const value = err.instancePath
    .split('/')
    .slice(1)
    .reduce<unknown>((v, p) => (v as Record<string, unknown> | undefined)?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], body);
  const expected =
    err.keyword === 'type'
      ? `must be ${String(err.params.type).replace(/^(.)/, (m) => (/[aeiou]/.test(m) ? `an ${m}` : `a ${m}`))}`
      : (err.message ?? 'is not valid');
  return `invalid JSON: ${field} ${expected}, not ${jsonType(value)}`;
}

/** The object holding the value at a JSON pointer, and its key there; undefined for the root or an array item. */
function holderOf(body: unknown, pointer: string): { holder: Record<string, unknown>; key: string } | undefined {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const key = parts.pop();
  const holder = parts.reduce<unknown>((v, p) => (v as Record<string, unknown> | undefined)?.[p], body);
  if (key === undefined || !holder || typeof holder !== 'object' || Array.isArray(holder)) return undefined;
  return { holder: holder as Record<string, unknown>, key };
}

/**
 * Returns `body` typed as T when its known fields have the API's types; a 400 naming the first wrong field
 * otherwise. A null where a field's type has no null is dropped first: Go leaves such a field at its zero
 * value, which is what berth reads for an absent one.
 */
export function checkBody<T>(kind: BodyKind, body: unknown): T {
  const validate = validators.get(kind)!;
  for (;;) {
    if (validate(body)) return body as T;
    const errors = validate.errors ?? [];
    const deepest = errors.reduce<ErrorObject | undefined>((a, e) => (!a || e.instancePath.length > a.instancePath.length ? e : a), undefined);
    const at = deepest?.keyword === 'type' ? holderOf(body, deepest.instancePath) : undefined;
    if (at && at.holder[at.key] === null) {
      delete at.holder[at.key];
      continue;
    }
    throw badRequest(deepest ? describe(deepest, body) : 'invalid JSON in the request body');
  }
}
