// Fails with exit code 42, an empty stdout and a reason on stderr.
'use strict';
const { readStdin, run } = require('./lib.js');

run(async () => {
  await readStdin();
  process.stderr.write('exit42: failing on purpose with exit code 42\n');
  process.exit(42);
});
