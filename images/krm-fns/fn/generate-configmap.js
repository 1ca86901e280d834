// Generator: appends a ConfigMap named functionConfig.data.name holding the rest of functionConfig.data.
'use strict';
const { readResourceList, writeResourceList, configData, run } = require('./lib.js');

run(async () => {
  const list = await readResourceList();
  const { name = 'generated', ...data } = configData(list);
  list.items.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
  writeResourceList(list);
});
