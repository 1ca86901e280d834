// A kustomization whose transformers are N container functions (krm-set-annotations), as the shim and load
// benches build it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function kustomization(dir: string, functions: number): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'service.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: cart}\nspec: {ports: [{port: 80}]}\n');
  const names: string[] = [];
  for (let i = 0; i < functions; i++) {
    names.push(`fn${i}.yaml`);
    writeFileSync(
      join(dir, `fn${i}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn${i}\n  annotations:\n    config.kubernetes.io/function: |\n      container: {image: localhost/berth/krm-set-annotations:1}\ndata: {step${i}: done}\n`,
    );
  }
  writeFileSync(join(dir, 'kustomization.yaml'), `resources: [service.yaml]\ntransformers: [${names.join(', ')}]\n`);
}
