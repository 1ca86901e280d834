// Validator: every item must carry the label functionConfig.data.label (default "team"); otherwise it
// returns error results and exits 1, as kyaml's framework does. data.kinds (comma list) limits the check.
'use strict';
const { readResourceList, writeResourceList, configData, run } = require('./lib.js');

run(async () => {
  const list = await readResourceList();
  const cfg = configData(list);
  const label = cfg.label || 'team';
  const kinds = cfg.kinds ? String(cfg.kinds).split(',') : undefined;
  list.results = [];
  for (const item of list.items) {
    const md = item.metadata || {};
    if (kinds && !kinds.includes(item.kind)) continue;
    if (md.labels && md.labels[label]) continue;
    list.results.push({
      message: `${item.kind} ${md.name} has no label ${label}`,
      severity: 'error',
      resourceRef: { apiVersion: item.apiVersion, kind: item.kind, name: md.name },
      field: { path: `metadata.labels.${label}` },
    });
  }
  const failed = list.results.length > 0;
  if (failed) process.stderr.write(`require-label: ${list.results.length} item(s) without label ${label}\n`);
  writeResourceList(list, failed ? 1 : 0);
});
