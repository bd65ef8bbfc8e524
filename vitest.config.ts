import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Spawned CLIs and MCP servers are slow to start on a loaded 2-core machine: be generous, never flaky.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most of the suite's time is spent waiting on spawned CLIs and servers, not computing: two workers even on
    // two cores (vitest's default, one fewer than the cores, would leave such a machine with one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The JSON report lets CI print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: ".tmp/vitest-results.json" }]]
  }
})
