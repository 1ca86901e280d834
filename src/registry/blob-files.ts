/**
 * Blobs kept on disk while an image is assembled or read from an artifact: one file per blob, named by
 * its digest in a folder the caller owns (and removes), written under a temporary name first so a blob
 * cut midway never passes for a whole one. Large blobs are hashed as they stream past, never held whole.
 */
import { createHash, randomUUID, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where the blob of `digest` lives in `dir`. */
export function blobFile(dir: string, digest: string): string {
  return path.join(dir, digest.replace(':', '-'));
}

/** A pass-through that hashes (and counts) what flows through it. */
export class HashingTap extends Transform {
  private readonly hash: Hash = createHash('sha256');
  bytes = 0;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }

  /** `sha256:<hex>`; only once the stream has ended. */
  digest(): string {
    return `sha256:${this.hash.digest('hex')}`;
  }
}

/** A temporary name in `dir` for a blob being written (settleBlob gives it its digest's name). */
export function partialFile(dir: string): string {
  return path.join(dir, `.partial-${randomUUID()}`);
}

/** The digest and size of a file, read as a stream. */
export async function digestOfFile(file: string): Promise<{ digest: string; size: number }> {
  const tap = new HashingTap();
  tap.resume();
  await pipeline(createReadStream(file), tap);
  return { digest: tap.digest(), size: tap.bytes };
}

/** Moves a finished temporary file to its digest's name. */
export async function settleBlob(tmp: string, dir: string, digest: string): Promise<string> {
  const file = blobFile(dir, digest);
  await rename(tmp, file);
  return file;
}

export async function discard(file: string): Promise<void> {
  await rm(file, { force: true });
}
