/**
 * An image artifact (a rootfs folder with its metadata.json, an OCI image layout, a docker save
 * archive) refused before anything of it is pushed: the message names the file and what is wrong.
 */
export class ImageArtifactError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ImageArtifactError';
  }
}
