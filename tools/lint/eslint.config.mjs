// ESLint with the Effect community's setup: the recommended rule sets plus `@effect/eslint-plugin`, whose dprint
// rule formats (`npm run lint:fix` applies it). The options are those of Effect's own repository, except the line
// width, which is this code's. The root `eslint.config.mjs` re-exports this file, so patterns are relative to the root.
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"

export default defineConfig(
  { ignores: ["dist/", "coverage/", ".tmp/", "bench/results/"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    languageOptions: { globals: globals.node },
    rules: {
      "object-shorthand": "error",
      // A `let` that a callback reads before its one assignment cannot be a `const`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // Matching control characters is this code's job: it strips them from text bound for a terminal or a log.
      "no-control-regex": "off",
      // `Effect.gen(function*() { ... })` without a `yield*` is a normal way to build an Effect.
      "require-yield": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 140,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  }
)
