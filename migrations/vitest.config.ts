import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "migrations",
    include: ["test/**/*.test.ts"]
  }
})
