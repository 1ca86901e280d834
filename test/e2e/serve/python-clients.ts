// The Python interpreters berth serve's docker-py tests run with: Debian's python3-docker 5 (scripts/setup-machine.sh)
// and docker-py 7 with testcontainers-python from PyPI (scripts/clients/python.sh, a cached virtual environment).

export interface PythonClient {
  /** For test names: `docker-py 7.2.0 (PyPI)`. */
  label: string;
  /** The interpreter; empty: the PyPI environment's (scripts/clients/python.sh, see clientTool). */
  python: string;
}

export const PYTHON_CLIENTS: PythonClient[] = [
  // Debian's interpreter, the one python3-docker is installed for (a pyenv python3 earlier on PATH lacks it)
  { label: 'docker-py 5.0.3 (Debian)', python: '/usr/bin/python3' },
  { label: 'docker-py 7.2.0 (PyPI)', python: '' },
];
