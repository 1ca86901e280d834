/**
 * The builder pod's log as the classic builder's JSON stream: each line a `{"stream": …}` message, buildah's
 * `STEP 1/4: FROM x` worded as docker's `Step 1/4 : FROM x`, and the lines of berth-build (the builder image's
 * entry) read rather than shown: the marker that the image is written, the build's failure and its exit code.
 * The end is docker's: `{"aux":{"ID":…}}`, `Successfully built`, `Successfully tagged`, or one errorDetail.
 */
import type { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { familiarImage } from './image-ref.js';

/** berth-build's line once /out/image.tar is whole (images/builder/berth-build). */
export const IMAGE_READY = 'berth-build: image ready at /out/image.tar';
const BUILD_FAILED = /^berth-build: the build failed \(exit (\d+)\)$/;
/** buildah's step line, with the stage (`[1/2] `) it prefixes in a multi-stage build */
const STEP = /^(\[\d+\/\d+\] )?STEP (\d+\/\d+): (.*)$/;
/** buildah's own words for what went wrong (`error building at STEP "RUN exit 3": …`, `Error: …`). */
const ERROR_LINE = /^(error|Error:|ERRO|level=error)/;

export class BuildStream {
  private partial = '';
  /** A character whose bytes a chunk's end split waits for the rest of them. */
  private readonly decoder = new StringDecoder('utf8');
  private lastError = '';
  private imageReady = false;
  private failedWith: number | undefined;

  constructor(
    private readonly out: Writable,
    private readonly quiet: boolean,
  ) {}

  /** A piece of the log; whole lines are shown, a partial one waits for its end. */
  write(chunk: Buffer | string): void {
    const lines = (this.partial + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk))).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line.replace(/\r$/, ''));
  }

  /** The log ended: a last line without its newline is shown too. */
  end(): void {
    this.partial += this.decoder.end();
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }

  /** berth-build said /out/image.tar is whole. */
  get ready(): boolean {
    return this.imageReady;
  }

  /** berth-build's exit code once it said the build failed (its last line: the log is whole then). */
  get failedExit(): number | undefined {
    return this.failedWith;
  }

  /** What the builder said last of an error, for the build's errorDetail. */
  get errorText(): string {
    return this.lastError;
  }

  private line(line: string): void {
    if (line === IMAGE_READY) return void (this.imageReady = true);
    const failed = BUILD_FAILED.exec(line);
    if (failed) return void (this.failedWith ??= Number(failed[1]));
    if (ERROR_LINE.test(line)) this.lastError = line;
    const step = STEP.exec(line);
    this.show(step ? `${step[1] ?? ''}Step ${step[2]} : ${step[3]}` : line);
  }

  private show(text: string): void {
    if (!this.quiet) this.message({ stream: `${text}\n` });
  }

  /** The end of a successful build as dockerd writes it (`-q` prints the id alone). */
  succeeded(id: string, tags: string[]): void {
    this.message({ aux: { ID: id } });
    if (this.quiet) return void this.message({ stream: `${id}\n` });
    this.message({ stream: `Successfully built ${id.replace(/^sha256:/, '').slice(0, 12)}\n` });
    for (const t of tags) this.message({ stream: `Successfully tagged ${familiarImage(t)}\n` });
  }

  /** The build's failure: the one message a client reads as the error (the docker CLI exits 1 with it). */
  failed(message: string): void {
    this.message({ errorDetail: { message }, error: message });
  }

  private message(m: object): void {
    this.out.write(`${JSON.stringify(m)}\n`);
  }
}
