/**
 * A small pflag-compatible parser (the library the docker CLI uses), so berth accepts exactly the
 * spellings docker accepts: `--flag value`, `--flag=value`, `-e K=V`, `-eK=V`, combined `-it`,
 * `--bool=false`, `--` ending the flags, and flag parsing stopping at the first positional argument
 * (docker sets SetInterspersed(false) on `run`, so everything after IMAGE belongs to the container).
 */

export interface FlagSpec {
  long: string;
  short?: string;
  /** `bool` takes no value (optionally `=true|false`), `value` keeps the last, `list` keeps all. */
  type: 'bool' | 'value' | 'list';
}

export interface ParsedFlags {
  bools: Map<string, boolean>;
  values: Map<string, string[]>;
  positionals: string[];
}

/** Exit code docker uses for errors of the docker CLI itself (bad flags, daemon unreachable, ...). */
export const DOCKER_CLI_ERROR_EXIT = 125;

export class DockerUsageError extends Error {
  readonly exitCode = DOCKER_CLI_ERROR_EXIT;
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'DockerUsageError';
  }
}

/** `--help` among a command's flags: pflag's ErrHelp, answered with the command's usage. */
export class DockerHelpRequest extends Error {
  constructor(readonly command: string) {
    super(`help for docker ${command}`);
    this.name = 'DockerHelpRequest';
  }
}

export function parseFlags(argv: string[], specs: FlagSpec[], command: string, interspersed: boolean): ParsedFlags {
  const byLong = new Map(specs.map((s) => [s.long, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short as string, s]));
  const out: ParsedFlags = { bools: new Map(), values: new Map(), positionals: [] };
  const put = (spec: FlagSpec, value: string): void => {
    const list = out.values.get(spec.long) ?? [];
    if (spec.type === 'value') list.length = 0;
    list.push(value);
    out.values.set(spec.long, list);
  };
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i++];
    if (arg === '--') {
      out.positionals.push(...argv.slice(i));
      break;
    }
    if (arg === '--help') throw new DockerHelpRequest(command);
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byLong.get(name);
      if (!spec) throw new DockerUsageError(`unknown flag: --${name}`, command);
      if (spec.type === 'bool') {
        out.bools.set(spec.long, eq < 0 ? true : parseBool(arg.slice(eq + 1), `--${name}`, command));
      } else if (eq >= 0) {
        put(spec, arg.slice(eq + 1));
      } else {
        if (i >= argv.length) throw new DockerUsageError(`flag needs an argument: --${name}`, command);
        put(spec, argv[i++]);
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // Shorthand cluster: booleans may be combined (-it); a value flag takes the rest or the next arg.
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        const spec = byShort.get(c);
        if (!spec) throw new DockerUsageError(`unknown shorthand flag: '${c}' in ${arg}`, command);
        if (spec.type === 'bool') {
          if (arg[j + 1] === '=') {
            out.bools.set(spec.long, parseBool(arg.slice(j + 2), `-${c}`, command));
            break;
          }
          out.bools.set(spec.long, true);
          continue;
        }
        let rest = arg.slice(j + 1);
        if (rest.startsWith('=')) rest = rest.slice(1);
        if (rest.length > 0) put(spec, rest);
        else {
          if (i >= argv.length) throw new DockerUsageError(`flag needs an argument: '${c}' in -${c}`, command);
          put(spec, argv[i++]);
        }
        break;
      }
      continue;
    }
    out.positionals.push(arg);
    if (!interspersed) {
      out.positionals.push(...argv.slice(i));
      break;
    }
  }
  return out;
}

function parseBool(text: string, flag: string, command: string): boolean {
  if (/^(1|t|true|TRUE|True)$/.test(text)) return true;
  if (/^(0|f|false|FALSE|False)$/.test(text)) return false;
  throw new DockerUsageError(`invalid argument "${text}" for "${flag}" flag: strconv.ParseBool: parsing "${text}": invalid syntax`, command);
}
