// Passes items through unchanged and writes progress lines to stderr (which must not reach stdout).
'use strict';
const { readResourceList, writeResourceList, run } = require('./lib.js');

run(async () => {
  const list = await readResourceList();
  process.stderr.write(`chatty: read ${list.items.length} item(s)\n`);
  process.stderr.write('chatty: this line goes to stderr only\n');
  writeResourceList(list);
});
