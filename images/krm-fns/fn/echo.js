// Byte-exact pipe for stream tests: stdin to stdout unchanged, its size and sha256 on stderr, exit
// code from EXIT_CODE (default 0). Not a YAML function: large inputs stay cheap.
'use strict';
const crypto = require('crypto');
const { readStdin, run } = require('./lib.js');

run(async () => {
  const data = await readStdin();
  const sha = crypto.createHash('sha256').update(data).digest('hex');
  process.stderr.write(`echo: bytes=${data.length} sha256=${sha}\n`);
  const code = Number(process.env.EXIT_CODE || '0');
  process.stdout.write(data, () => process.exit(code));
});
