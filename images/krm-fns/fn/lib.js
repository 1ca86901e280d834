// The KRM function wire format: one ResourceList in on stdin, one out on stdout, diagnostics on stderr.
'use strict';
const YAML = require('yaml');

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

async function readResourceList() {
  const text = (await readStdin()).toString('utf8');
  const doc = YAML.parse(text) || {};
  return { apiVersion: doc.apiVersion || 'config.kubernetes.io/v1', kind: 'ResourceList', items: doc.items || [], functionConfig: doc.functionConfig };
}

/** Writes the list and exits once stdout is flushed (a large list must not be cut short). */
function writeResourceList(list, exitCode = 0) {
  const out = { apiVersion: list.apiVersion, kind: 'ResourceList', items: list.items };
  if (list.results && list.results.length) out.results = list.results;
  process.stdout.write(YAML.stringify(out), () => process.exit(exitCode));
}

function configData(list) {
  const fc = list.functionConfig || {};
  return fc.data || fc.spec || {};
}

function run(fn) {
  fn().catch((err) => {
    process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
}

module.exports = { readStdin, readResourceList, writeResourceList, configData, run };
