/** A run that failed for a reason berth explains; `exitCode` follows docker run (125 for berth or the cluster). */
export class RunError extends Error {
  constructor(
    message: string,
    readonly exitCode = 125,
  ) {
    super(message);
    this.name = 'RunError';
  }
}
