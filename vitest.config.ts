import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { memoryTmp } from "./test/support/memoryTmp.js"
import { transformCache } from "./test/support/transformCache.js"

/** `npm run test:agents` (scripts/agentTools.mjs) sets it: only then is the agents tier a project. */
const agentsTier = process.env["PARALLEL_LLM_AGENTS_TIER"] === "1"

// The tests' temp directories (os.tmpdir(), inherited by the workers and the CLIs they spawn) go to memory where
// Linux has it (test/support/memoryTmp.ts says why and when): the suite writes and removes thousands of files. A
// TMPDIR already set is kept.
const tmp = process.env["TMPDIR"] === undefined ? memoryTmp() : undefined
if (tmp !== undefined) process.env["TMPDIR"] = tmp

const root = fileURLToPath(new URL(".", import.meta.url))

/** `vitest` watching for edits (`vitest`, `vitest watch`, `--watch` in a terminal), not one run (`vitest run`, `--run`, CI). */
const argv = process.argv.slice(2)
const watching = argv.includes("watch") || argv.includes("dev") || argv.includes("--watch") || argv.includes("-w") ||
  (!argv.includes("run") && !argv.includes("--run") && process.env["CI"] === undefined && process.stdin.isTTY === true)

/**
 * One run imports the app as the build emitted it (dist/, which tsc writes beside the bundle from the same src/, and
 * which the global setup brings up to date first), by Node itself: transformed from src/ by vitest instead, every
 * module went through its server in the main process and every imported name through a getter, which cost the unit
 * tier a fifth of its time (31-36 s and 54-62 CPU-s against 25-31 s and 47-52). Watching runs src/ itself, so that an
 * edit reruns the tests that import it.
 */
const distDir = `${root}dist/`
const fromBuild = {
  alias: [{ find: /^(?:\.\.\/)+src\/(.*)\.js$/, replacement: `${distDir}$1.js` }],
  external: [new RegExp(`^${distDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`)]
}

/** `--maxWorkers` (or `--max-workers`) as given on the command line (`=N` or ` N`), which overrides the config's. */
const maxWorkersFlag = process.argv.flatMap((arg, i, all) => {
  const [name, value] = arg.split("=", 2)
  if (name !== "--maxWorkers" && name !== "--max-workers") return []
  return [value ?? all[i + 1]]
}).at(-1)
/** Test files running at once (forks); undefined when the flag is not a plain count (e.g. `50%`). */
const workers = maxWorkersFlag === undefined
  ? Math.max(2, availableParallelism() - 1)
  : /^\d+$/.test(maxWorkersFlag)
  ? Number(maxWorkersFlag)
  : undefined

/**
 * One run takes each test module's transform from the last run's where the module did not change (test/support/
 * transformCache.ts): the unit tier's modules cost vitest's process ~2 s of CPU, with its workers waiting on them. Not
 * while watching (vitest keeps them in memory), nor for coverage (which would instrument them).
 */
const cached = !watching && !argv.some((arg) => arg.startsWith("--coverage"))

export default defineConfig({
  ...(watching ? {} : { resolve: { alias: fromBuild.alias } }),
  plugins: cached
    ? [transformCache({
      root,
      dir: `${root}node_modules/.cache/vitest-transforms`,
      // The cache's own code too: a change to it may change what it keeps.
      inputs: ["vitest.config.ts", "test/support/transformCache.ts", "tsconfig.json", "package-lock.json"].map((file) => `${root}${file}`),
      trees: ["src", "test", "scripts"].map((dir) => `${root}${dir}`)
    })]
    : [],
  test: {
    // The e2e tier spawns dist/main.js and a run imports dist/: build it first when src/ changed since (the one build
    // before a test run: `npm test`, `test:browser` and `test:agents` leave it to this).
    globalSetup: ["test/support/freshBuild.ts"],
    ...(watching ? {} : { server: { deps: { external: fromBuild.external } } }),
    // Spawned CLIs and MCP servers are slow to start on a loaded 2-core machine: be generous, never flaky.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The workers allocate fast (each test runs the app's Effect programs): with semi-spaces of up to 64 MB (V8's
    // default stops at 16) their garbage collection went from ~4.0 to ~2.3 s of the unit tier's CPU, and the tier
    // from a median of 54.0 to 51.1 CPU-s over eight alternated pairs (bench/README.md, the eleventh session).
    poolOptions: { forks: { execArgv: ["--max-semi-space-size=64"] } },
    // Most of the suite's time is spent waiting on spawned CLIs and servers, not computing: two workers even on
    // two cores (vitest's default, one fewer than the cores, would leave such a machine with one).
    ...(workers === undefined ? {} : { maxWorkers: workers }),
    // As many kept as at most: above the minimum (vitest's default here is one) the pool (tinypool, idleTimeout 0)
    // stops a worker the moment it is idle, and with `--maxWorkers=3` that ended runs whose 95 unit files had all
    // passed with an unhandled "Terminating worker thread". So the minimum follows `--maxWorkers` too.
    ...(workers === undefined ? {} : { minWorkers: workers }),
    // Test files share their worker's modules (Effect, the SDK, the app) instead of importing them again for every
    // file: most of a file's time was that import (the unit tier: 121 s isolated, 46 s not). Set here, not per
    // project: vitest 3.2 ignores a project's own \`isolate\`. No test leaves global state behind (the unit tier
    // passes with --sequence.shuffle; the e2e tests keep theirs in the processes they spawn).
    isolate: false,
    // The JSON report lets CI print a plain "N passed, N failed" closing line (unit and e2e in one file).
    // `npm run test:browser` (--outputFile.json=) and the agents tier (scripts/agentTools.mjs) write their own, so a
    // CI run keeps every tier's counts.
    reporters: ["default", "json"],
    outputFile: { json: agentsTier ? ".tmp/vitest-agents.json" : ".tmp/vitest-results.json" },
    // Tiers: `npm run test:unit` (`vitest run --project unit`) runs the in-process tests alone; `vitest run` runs them all.
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"] } },
      // A real browser (Debian's chromium) on the built CLI; the tests skip, saying why, where it is missing.
      { extends: true, test: { name: "browser", include: ["test/browser/**/*.test.ts"] } },
      // The vendors' CLI agents against loopback fakes (test/agents/): `npm run test:agents` alone runs them (it installs
      // the CLIs first), so a plain `vitest run` neither needs nor waits for them.
      ...(agentsTier
        ? [{ extends: true as const, test: { name: "agents", include: ["test/agents/**/*.test.ts"] } }]
        : [])
    ]
  }
})
