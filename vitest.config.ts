import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["migrations/vitest.config.ts", "packages/*/vitest.config.ts"]
  }
})
