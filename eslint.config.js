// Lint rules: ESLint's and typescript-eslint's recommended sets over all TypeScript and the plain JS scripts, and over
// src/ the set that reads the types too (floating promises, unbound methods, what is thrown). The tests and the bench
// keep the set without types: with types, linting the whole tree takes several times as long.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ESLint has no rule for the length of a class: this one counts a class body's lines as max-lines-per-function does.
const local = {
  rules: {
    'max-lines-per-class': {
      meta: {
        type: 'suggestion',
        schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 0 } }, additionalProperties: false }],
        messages: { exceed: 'Class body has too many lines ({{count}}). Maximum allowed is {{max}}.' },
      },
      create(context) {
        const max = context.options[0]?.max ?? 150;
        const { lines } = context.sourceCode;
        // Lines that hold only a comment (and blanks) are not counted.
        const commentLines = new Set();
        for (const { loc } of context.sourceCode.getAllComments()) {
          const before = lines[loc.start.line - 1].slice(0, loc.start.column);
          const after = lines[loc.end.line - 1].slice(loc.end.column);
          if (before.trim() !== '' || after.trim() !== '') continue;
          for (let n = loc.start.line; n <= loc.end.line; n++) commentLines.add(n);
        }
        return {
          ClassBody(node) {
            let count = 0;
            for (let n = node.loc.start.line; n <= node.loc.end.line; n++) {
              if (lines[n - 1].trim() !== '' && !commentLines.has(n)) count++;
            }
            if (count > max) context.report({ node: node.parent, messageId: 'exceed', data: { count, max } });
          },
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'dist.*/', 'node_modules/', 'coverage/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ['src/**/*.ts'] })),
  {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A rejection passes on what it was given (an abort signal's reason, a caught error), as a `throw` may
      // (only-throw-error's defaults); a value known not to be an Error is still refused.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-control-regex': 'off',
    },
  },
  {
    // A function longer than a screen is split into named steps, a class longer than two into named parts (the source
    // only: a test's describe block is a list).
    files: ['src/**/*.ts'],
    plugins: { local },
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'local/max-lines-per-class': ['error', { max: 150 }],
    },
  },
  {
    // Time reaches the rules through the run's Clock (src/clock.ts), so that a test drives it with a FakeClock. A
    // place that must use the machine's own time says why, beside the comment that lets it.
    files: ['src/**/*.ts'],
    ignores: ['src/clock.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: "Read the run's clock: deps.now() or clock.now()." },
        { object: 'performance', property: 'now', message: 'Time a span with clock.monotonic().' },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use clock.setTimeout() or sleep(clock, ms) (src/clock.ts).' },
        { name: 'setInterval', message: 'Use the run clock (src/clock.ts).' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:timers', message: 'Use the run clock (src/clock.ts).' },
            { name: 'node:timers/promises', message: 'Use sleep(clock, ms) (src/clock.ts).' },
          ],
        },
      ],
    },
  },
  {
    // CommonJS files (the bin script): require and the module-scope names are theirs.
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', __filename: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
