// Lint and format for the whole repository: `npm run lint` checks, `npm run format` fixes (ESLint --fix).
// Formatting is the Effect house style through @effect/eslint-plugin's `@effect/dprint` rule (dprint under ESLint):
// 2 spaces, no semicolons, double quotes, 120 columns. Only syntactic rules, no type-aware ones, so a lint of the
// whole tree stays a matter of seconds.
import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: ["**/dist/**", "bundle/**", "**/node_modules/**", "**/.dock/**", "docs/**"]
  },
  {
    files: ["**/*.ts", "**/*.tsx", "**/*.mjs"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended, ...effect.configs.dprint],
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      // Unused bindings are bugs or leftovers; a leading underscore marks one kept on purpose.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Effect generators may have no `yield*` (an `Effect.gen` that only returns or only fails is still an Effect).
      "require-yield": "off",
      // Non-null assertions stand where an index or a match is known to exist (e.g. `lines[0]!` after a length check).
      "@typescript-eslint/no-non-null-assertion": "off",
      // `{}` is the empty requirement/options type in Effect signatures, not a mistake.
      "@typescript-eslint/no-empty-object-type": "off",
      // Effect's own namespaces (`Command.Command.Config`, declaration merging) are used as types.
      "@typescript-eslint/no-namespace": "off",
      // `any` is deliberate where it stands: constructor constraints such as `new(...args: any) => …` in Errors.ts
      // and JSON answers read in tests and benches. Effect's own lint configuration turns it off too.
      "@typescript-eslint/no-explicit-any": "off",
      // The sanitizers and argument checks match control characters on purpose (to refuse or strip them).
      "no-control-regex": "off",
      "object-shorthand": "error"
    }
  },
  {
    // The command line imports the wire contract (@dock/domain/api) only, so that --help and the admin commands
    // start without the server, the database or the MCP SDK; `serve` and `migrate` import the rest when they run
    // (commands/Server.ts, by dynamic import, which this rule leaves alone).
    files: ["packages/cli/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: ["@dock/domain", "@dock/mcp", "@dock/server", "@dock/migrations"].map((name) => ({
          name,
          message: "The CLI imports @dock/domain/api; the rest is loaded by `serve` and `migrate` when they run."
        }))
      }]
    }
  },
  {
    // Plain Node scripts (the content worker's loader, conformance helpers) run as JavaScript.
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } }
  }
)
