// Reports what the sandbox allows, as a generated ConfigMap "probe": uid/gid, the content of a mounted
// file (data.file), whether its folder is writable, whether a TCP connection to data.connect
// (host:port) opens, and the values of the environment variables named in data.env (comma list).
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');
const { readResourceList, writeResourceList, configData, run } = require('./lib.js');

function tryConnect(target) {
  if (!target) return Promise.resolve('not asked');
  const i = target.lastIndexOf(':');
  return new Promise((resolve) => {
    const sock = net.connect({ host: target.slice(0, i), port: Number(target.slice(i + 1)) });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve('timeout');
    }, 3000);
    sock.on('connect', () => {
      clearTimeout(timer);
      sock.end();
      resolve('connected');
    });
    sock.on('error', (err) => {
      clearTimeout(timer);
      resolve(`failed`);
      process.stderr.write(`probe: connect ${target}: ${err.code}\n`);
    });
  });
}

function tryWrite(dir) {
  try {
    const f = path.join(dir, `.probe-${process.pid}`);
    fs.writeFileSync(f, 'x');
    fs.unlinkSync(f);
    return 'writable';
  } catch (err) {
    return err.code === 'EROFS' ? 'read-only' : `not writable (${err.code})`;
  }
}

run(async () => {
  const list = await readResourceList();
  const cfg = configData(list);
  const data = { uid: String(process.getuid()), gid: String(process.getgid()) };
  if (cfg.file) {
    try {
      data.fileContent = fs.readFileSync(cfg.file, 'utf8');
    } catch (err) {
      data.fileContent = `unreadable (${err.code})`;
    }
    data.fileFolder = tryWrite(path.dirname(cfg.file));
  }
  data.connect = await tryConnect(cfg.connect);
  for (const name of String(cfg.env || '').split(',').filter(Boolean)) data[`env.${name}`] = process.env[name] === undefined ? '<unset>' : process.env[name];
  list.items.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data });
  writeResourceList(list);
});
