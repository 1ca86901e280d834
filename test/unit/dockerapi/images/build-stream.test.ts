// The builder pod's log as the classic builder's JSON stream: whole lines shown as `{"stream": …}`, buildah's steps in
// docker's words, berth-build's own lines read rather than shown, and the end as dockerd writes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { BuildStream, IMAGE_READY } from '../../../../src/dockerapi/images/build-stream.js';

const ID = `sha256:${'0123456789ab'.repeat(5)}cdef`;

/** A BuildStream over a sink; `messages()` parses what it wrote, one JSON message a line. */
function streamTo(quiet: boolean): { stream: BuildStream; messages(): unknown[] } {
  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      written += chunk.toString();
      done();
    },
  });
  const stream = new BuildStream(out, quiet);
  return {
    stream,
    messages: () => {
      assert.ok(written === '' || written.endsWith('\n'), 'each message ends its line');
      return written
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown);
    },
  };
}

const shown = (messages: unknown[]): string[] => messages.map((m) => (m as { stream: string }).stream);

test('whole lines are shown, a line split across chunks once its end comes; buildah steps worded as docker', () => {
  const { stream, messages } = streamTo(false);
  stream.write(Buffer.from('STEP 1/4: FR'));
  assert.deepEqual(messages(), [], 'a partial line waits');
  stream.write(Buffer.from('OM x\nsome output\r\nSTEP 2/4: RUN echo "STEP 3/4: no"\n'));
  stream.write('last line without its newline');
  assert.equal(messages().length, 3);
  stream.end();
  assert.deepEqual(shown(messages()), ['Step 1/4 : FROM x\n', 'some output\n', 'Step 2/4 : RUN echo "STEP 3/4: no"\n', 'last line without its newline\n']);
  stream.end();
  assert.equal(messages().length, 4, 'a second end shows nothing again');
});

test("a multi-stage build's steps keep buildah's stage prefix", () => {
  const { stream, messages } = streamTo(false);
  stream.write('[1/2] STEP 1/3: FROM base AS build\n[2/2] STEP 6/6: CMD ["sh"]\n[2/2] COMMIT x\n');
  assert.deepEqual(shown(messages()), ['[1/2] Step 1/3 : FROM base AS build\n', '[2/2] Step 6/6 : CMD ["sh"]\n', '[2/2] COMMIT x\n']);
});

test('a character whose bytes two chunks split is shown whole', () => {
  const { stream, messages } = streamTo(false);
  const bytes = Buffer.from('héllo → wörld\n');
  for (const b of bytes) stream.write(Buffer.from([b]));
  assert.deepEqual(shown(messages()), ['héllo → wörld\n']);
});

test("berth-build's lines are recorded, not shown; the last error line is kept", () => {
  const { stream, messages } = streamTo(false);
  assert.equal(stream.ready, false);
  assert.equal(stream.failedExit, undefined);
  assert.equal(stream.errorText, '');
  stream.write('Error: first thing\nerror building at STEP "RUN exit 3": exit status 3\nplain output\n');
  stream.write('berth-build: the build failed (exit 3)\n');
  assert.equal(stream.failedExit, 3);
  assert.equal(stream.errorText, 'error building at STEP "RUN exit 3": exit status 3');
  assert.equal(stream.ready, false);
  stream.write(`${IMAGE_READY}\n`);
  assert.equal(stream.ready, true);
  assert.equal(stream.failedExit, 3, 'the failure stays seen');
  assert.deepEqual(shown(messages()), ['Error: first thing\n', 'error building at STEP "RUN exit 3": exit status 3\n', 'plain output\n']);
  stream.write('berth-build: the build failed (exit x)\nberth-build: the build failed (exit 4)\n');
  assert.equal(stream.failedExit, 3, 'a line that only looks like the failure is output; the first failure is the one kept');
  assert.equal(shown(messages()).at(-1), 'berth-build: the build failed (exit x)\n', 'and the second failure line is read, not shown');
});

test("succeeded: dockerd's classic builder end, the aux id, the short id, each tag in its familiar name", () => {
  const { stream, messages } = streamTo(false);
  stream.write('STEP 1/1: FROM x\n');
  stream.succeeded(ID, ['docker.io/library/app:latest', 'docker.io/user/app:2', 'localhost:5000/team/app:1']);
  assert.deepEqual(messages(), [
    { stream: 'Step 1/1 : FROM x\n' },
    { aux: { ID } },
    { stream: 'Successfully built 0123456789ab\n' },
    { stream: 'Successfully tagged app:latest\n' },
    { stream: 'Successfully tagged user/app:2\n' },
    { stream: 'Successfully tagged localhost:5000/team/app:1\n' },
  ]);
});

test('quiet: the build output is not shown, its end is the id alone', () => {
  const { stream, messages } = streamTo(true);
  stream.write('STEP 1/1: FROM x\nError: shown nowhere\n');
  stream.end();
  assert.deepEqual(messages(), []);
  assert.equal(stream.errorText, 'Error: shown nowhere', 'still recorded for the errorDetail');
  stream.succeeded(ID, ['docker.io/library/app:latest']);
  assert.deepEqual(
    messages().filter((m) => 'stream' in (m as object)),
    [{ stream: `${ID}\n` }],
  );
});

test('failed: one errorDetail and error message', () => {
  const { stream, messages } = streamTo(false);
  stream.failed('the build failed: Error: boom (the builder exited 3)');
  assert.deepEqual(messages(), [
    { errorDetail: { message: 'the build failed: Error: boom (the builder exited 3)' }, error: 'the build failed: Error: boom (the builder exited 3)' },
  ]);
});
