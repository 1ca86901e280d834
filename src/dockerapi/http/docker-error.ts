/**
 * A failure answered as Docker answers it: a status and `{"message": ...}`. Its own module so that
 * body-timeout.ts (which makes the 408) and http.ts (which sends it) both import it, not each other;
 * http.ts re-exports it for every handler.
 */
export class DockerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'DockerError';
  }
}

export const notFound = (what: string): DockerError => new DockerError(404, what);
export const badRequest = (what: string): DockerError => new DockerError(400, what);
export const conflict = (what: string): DockerError => new DockerError(409, what);
