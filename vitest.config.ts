import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Spawned CLIs and MCP servers are slow to start on a loaded 2-core machine: be generous, never flaky.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The JSON report lets CI print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".tmp/vitest-results.json" }]]
  }
})
