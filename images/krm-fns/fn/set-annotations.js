// Transformer: adds every key of functionConfig.data as an annotation to every item.
'use strict';
const { readResourceList, writeResourceList, configData, run } = require('./lib.js');

run(async () => {
  const list = await readResourceList();
  const data = configData(list);
  for (const item of list.items) {
    item.metadata = item.metadata || {};
    item.metadata.annotations = { ...(item.metadata.annotations || {}), ...data };
  }
  writeResourceList(list);
});
