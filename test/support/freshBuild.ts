import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { upToDate } from "../../scripts/buildInputs.mjs"
import { repoRoot } from "./spawnCli.js"

/**
 * vitest's global setup: `npm run build`'s incremental step (scripts/build.mjs --if-stale), so that the built CLI the
 * e2e tests spawn and the dist/ modules a run imports (vitest.config.ts) are never older than src/. It is the only
 * build before a test run (`npm test`, `test:browser`, `test:agents` leave it to this). Whether dist/ is current is
 * asked here first (~20 ms): a build process costs ~0.2 s of start-up, and vitest runs this once a project.
 */
export default function freshBuild(): void {
  if (upToDate()) return
  const build = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "build.mjs"), "--if-stale"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8"
  })
  if (build.error !== undefined) throw build.error
  // tsc says what is wrong on stdout: shown only when the build fails.
  if (build.status !== 0) {
    throw new Error(`the build (scripts/build.mjs --if-stale) failed with exit code ${build.status}:\n${build.stdout}`)
  }
}
