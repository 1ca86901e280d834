// Reads its input, tells stderr it is sleeping, then waits data.seconds (default 300) before passing
// items through: something to interrupt.
'use strict';
const { readResourceList, writeResourceList, configData, run } = require('./lib.js');

run(async () => {
  const list = await readResourceList();
  const seconds = Number(configData(list).seconds || '300');
  process.stderr.write(`sleep: sleeping ${seconds} s\n`);
  setTimeout(() => writeResourceList(list), seconds * 1000);
});
