// The edit `docker network disconnect` makes in a member's /etc/hosts: the names it lost, only on its IP's lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withoutNames } from '../../../../src/dockerapi/networks/hosts-file.js';

const hosts = [
  '# Kubernetes-managed hosts file.',
  '127.0.0.1\tlocalhost',
  '10.0.0.5\tsrv-pod',
  '',
  '# Entries added by HostAliases.',
  '10.0.0.7\tweb\tbs-web',
  '10.0.0.8\tdb',
  '10.0.0.7\tlateweb bs-web',
  '',
].join('\n');

test('the names go from the lines of their IP; a line left without a name goes; the rest stays byte for byte', () => {
  assert.equal(
    withoutNames(hosts, '10.0.0.7', ['lateweb', 'bs-web']),
    [
      '# Kubernetes-managed hosts file.',
      '127.0.0.1\tlocalhost',
      '10.0.0.5\tsrv-pod',
      '',
      '# Entries added by HostAliases.',
      '10.0.0.7\tweb',
      '10.0.0.8\tdb',
      '',
    ].join('\n'),
  );
});

test('another IP with the same name, comments and unknown names are left alone', () => {
  assert.equal(withoutNames(hosts, '10.0.0.8', ['web']), hosts);
  assert.equal(withoutNames('# 10.0.0.7 web\n', '10.0.0.7', ['web']), '# 10.0.0.7 web\n');
  assert.equal(withoutNames(hosts, '10.0.0.7', []), hosts);
});
