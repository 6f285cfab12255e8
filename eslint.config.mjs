// ESLint for the whole workspace (`npm run lint`): typescript-eslint's type-aware rules over
// the one program of tsconfig.check.json. They catch what review misses: promises nobody awaits
// or catches, promises handed where a callback is expected, unchecked casts, `any` leaking in.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bench/results/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.check.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unsafe-type-assertion': 'error',
      // Off, deliberately: an `async` function without `await` still returns a promise and turns a
      // throw into a rejection, which is what our Promise-returning interfaces (handlers, stores,
      // publishers) promise their callers. Dropping `async` there would make a sync throw escape.
      '@typescript-eslint/require-await': 'off',
      // A `let` that a closure reads before its one assignment (a timer the stop function clears) stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // `const { secret: _secret, ...rest } = row` is how we drop a field from a copy.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // The run inspector's browser code (issue 27) has its own program: DOM types, bundler resolution.
    files: ['packages/run-inspector/app/**/*.ts', 'packages/run-inspector/test-host/**/*.ts'],
    languageOptions: {
      parserOptions: { project: ['./packages/run-inspector/app/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The web console (apps/web) is browser code: its own program with DOM types (apps/web/tsconfig.json).
    files: ['apps/web/**/*.ts'],
    languageOptions: {
      parserOptions: { project: ['./apps/web/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The console's one typed fetch (`api<T>`) takes its own gateway's JSON as the shape the page
    // declares (apps/web/src/model.ts): a wrong guess shows wrong text in a page, it cannot corrupt state.
    files: ['apps/web/src/api.ts'],
    rules: { '@typescript-eslint/no-unsafe-type-assertion': 'off' },
  },
  {
    // Tests read untyped wire data (JSON bodies, MCP results, log lines) and assert on its shape
    // with `expect` at once: a wrong guess fails the test, it cannot corrupt state. So the `any`
    // family and casts are allowed there; everything about promises stays an error.
    files: ['**/*.test.ts', '**/test/**/*.ts', '**/test-fixtures/**/*.ts', 'bench/**/*.ts', 'apps/*/bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-type-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // jest's `expect(obj.method).toHaveBeenCalled()` passes methods unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
