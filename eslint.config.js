// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

/** internal.ts of a layer is not a package entry (package.json "exports"): nothing outside src/ uses it. */
const INTERNAL_ENTRY = {
  regex: '(^|/)src/(.+/)?internal(\\.js)?$',
  message: 'internal.ts is the package\'s own: use a package entry (package.json "exports").',
};

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      'docs-site/**',
      'reports/**',
      '.stryker-tmp/**',
      '*.config.js',
      'scripts/**',
      'bench/register.js',
      'test/global-*.js',
      // Type-checked and run by the package test against the packed package (test/package).
      'examples/**',
    ],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // A resilience engine propagates whatever the user's code threw, Error or not.
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/only-throw-error': 'off',
    },
  },
  {
    // The engine is framework-free: nothing under src/core may reach Nest or an optional peer.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@nestjs/*', 'ioredis', 'axios', 'rxjs', '@opentelemetry/*', '../nest/*', '../../nest/*'] },
      ],
    },
  },
  {
    // Outside the engine, src/ reaches the engine and configuration through their faces only: the public
    // API (index.ts) and, for the package's own layers, internal.ts — never a module inside their folders.
    // src/testing stands on src/core/time alone (see ARCHITECTURE.md).
    files: ['src/**/*.ts'],
    ignores: ['src/core/**', 'src/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+core/(?!(index|internal)\\.js$).+',
              message: 'Use the core through src/core/index.ts (or src/core/internal.ts inside the package).',
            },
            {
              regex: '^(\\.\\./)+config/(?!(index|internal)\\.js$).+',
              message: 'Use configuration through src/config/index.ts (or src/config/internal.ts inside the package).',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^_/]',
          message: "Underscore members are the engine's own; use the public API of the core.",
        },
      ],
    },
  },
  {
    // Outside src/: package entries only (INTERNAL_ENTRY), and none of the engine's underscore members.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'sample-app/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [INTERNAL_ENTRY] }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^_/]',
          message: "Underscore members are the engine's own; use the public API of the core.",
        },
      ],
    },
  },
  {
    // The engine's specs (test/core, what `npm run mutate:core` runs) load the engine alone: a spec that
    // imported the root barrel, the Nest layer or an optional peer's adapter would load it for every
    // mutant it covers. Allowed: src/core.entry.ts, src/core/, src/config/ and src/testing/.
    files: ['test/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            INTERNAL_ENTRY,
            {
              regex: '(^|/)src/(?!core\\.entry\\.js$|core/|config/|testing/).+',
              message: 'An engine spec imports src/core.entry.ts (or src/core, src/config, src/testing) alone.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  prettier,
);
