import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import berth from './lint/layers.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The layers of docs/layout.md: who may import whom, and only src/kube talks to client-node.
    files: ['src/**/*.ts'],
    plugins: { berth },
    rules: { 'berth/layers': 'error', '@typescript-eslint/no-explicit-any': 'error' },
  },
);
