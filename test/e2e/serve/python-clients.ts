// The Python interpreters berth serve's docker-py tests run with: Debian's python3-docker 5 (scripts/setup-machine.sh)
// and docker-py 7 with testcontainers-python from PyPI (scripts/clients/python.sh, a cached virtual environment).

export interface PythonClient {
  /** For test names: `docker-py 7.2.0 (PyPI)`. */
  label: string;
  /** The interpreter; empty: the PyPI environment's (scripts/clients/python.sh, see clientTool). */
  python: string;
  /** The API version the client asks for against an engine that announces `announced` (none: it negotiates). */
  expectedApiVersion(announced: string): string;
}

export const PYTHON_CLIENTS: PythonClient[] = [
  // Debian's interpreter, the one python3-docker is installed for (a pyenv python3 earlier on PATH lacks it); docker-py
  // 5 asks for its default, 1.41, without negotiating
  { label: 'docker-py 5.0.3 (Debian)', python: '/usr/bin/python3', expectedApiVersion: () => '1.41' },
  // docker-py 7's DockerClient takes the version the engine announces (version=None is `auto` since 7.0)
  { label: 'docker-py 7.2.0 (PyPI)', python: '', expectedApiVersion: (announced) => announced },
];
