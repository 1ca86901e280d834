import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromImages, madeBases } from '../../../../src/dockerapi/images/build-bases.js';

test('the images FROM names: ARGs before the first FROM substituted (build args over defaults), stages and scratch left out', () => {
  const dockerfile = [
    '# syntax comment',
    'ARG BASE=busybox:1',
    'ARG TAG',
    'FROM ${BASE} AS build',
    'ARG LATER=ignored',
    'FROM --platform=linux/amd64 build AS again',
    'FROM registry.example/app:${TAG:-2} \\',
    '  AS final',
    'FROM scratch',
    'from $BASE',
  ].join('\n');
  assert.deepEqual(fromImages(dockerfile, {}), ['busybox:1', 'registry.example/app:2', 'busybox:1']);
  assert.deepEqual(fromImages(dockerfile, { BASE: 'made:1', TAG: '3' }), ['made:1', 'registry.example/app:3', 'made:1']);
});

test('an ARG after the first FROM is a stage ARG: it does not change a later FROM', () => {
  assert.deepEqual(fromImages('FROM scratch\nARG X=made:1\nFROM ${X}\n', {}), []);
});

test('made bases: the FROM names berth has a pushed digest for, each once, by the name as written', () => {
  const known = [
    { tags: new Set(['docker.io/library/made:1']), pullRef: 'reg:5000/p/made-1@sha256:aa' },
    { tags: new Set(['localhost/app:2']), pullRef: 'reg:5000/p/app-2@sha256:bb' },
    { tags: new Set(['docker.io/library/busybox:1']) }, // a pull record: the registry has it, nothing to hand over
  ];
  const dockerfile = 'FROM made:1 AS a\nFROM localhost/app:2\nFROM busybox:1\nFROM made:1\n';
  assert.deepEqual(madeBases(dockerfile, {}, known), [
    { name: 'made:1', ref: 'reg:5000/p/made-1@sha256:aa' },
    { name: 'localhost/app:2', ref: 'reg:5000/p/app-2@sha256:bb' },
  ]);
  assert.deepEqual(madeBases('FROM UPPER:case\n', {}, known), [], 'a name that is no reference is left to the builder');
});
