// --image-server-ca (berth serve; berth task plan run and target check): the image CA whose certificates the image pods present.
import { readImageCa, type ImageCa } from '../registry/image-ca.js';

export const IMAGE_SERVER_CA_HELP =
  "the image CA the nodes trust (tls.crt and tls.key, as `berth image-ca DIR` makes them or a kubernetes.io/tls Secret mounts them): each image pod presents a certificate it issues for the pod's address";

/**
 * `--image-server-ca DIR`, else the face's variable (`envName`): the CA read and checked; none when neither is given.
 * The flag without an image server is refused: it would change nothing.
 */
export function imageServerCaOf(
  flags: { imageServerCa?: string },
  env: NodeJS.ProcessEnv,
  imageServer: string | undefined,
  envName: string,
): ImageCa | undefined {
  if (!imageServer) {
    if (flags.imageServerCa !== undefined)
      throw new Error('--image-server-ca signs the certificates of the pods --image-server makes: give --image-server too');
    return undefined;
  }
  const dir = flags.imageServerCa ?? (env[envName]?.trim() || undefined);
  return dir ? readImageCa(dir, flags.imageServerCa !== undefined ? '--image-server-ca' : `$${envName}`) : undefined;
}
