import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Spawned CLIs and MCP servers are slow to start on a loaded 2-core machine: be generous, never flaky.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"]
  }
})
