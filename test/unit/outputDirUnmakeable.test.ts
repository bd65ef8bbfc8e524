import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeDirectories } from "../../src/domain/makeDirectories.js"
import { loadDegraded } from "../../src/settings/degraded.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// An output directory whose parent exists but cannot hold it (`/proc/x`): Node 20's `mkdir(…, { recursive: true })`
// loops there for ever, so `ask` hung. It fails at once, in one line naming --output-dir and the reason; a server
// starts and names the setting. Under a dangling symlink the reason is that its target does not exist.

const provider = withFakeProvider({ script: { "od/one": { kind: "ok", content: "one" } } })
const tempDir = makeTempDirs("pllm-output-dir-")

/** A directory under a symlink to nothing. */
const underDanglingLink = () => {
  const dir = tempDir()
  fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "dangling"))
  return path.join(dir, "dangling", "runs")
}

const hasProc = fs.existsSync("/proc/self")

describe("an output directory that cannot be created", () => {
  it.runIf(hasProc)("ask --output-dir /proc/x fails at once, naming the flag and the reason", async () => {
    const dir = tempDir()
    const r = await runCliInProcess(["ask", "hi", "-m", "od/one", "--output-dir", "/proc/x"], { env: provider.cliEnv(dir) })
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe("parallel-llm: cannot create the output directory /proc/x (--output-dir): no such file or directory")
    expect(provider.log()).toHaveLength(0)
  })

  it("ask with the output directory under a dangling symlink fails the same way", async () => {
    const outputDir = underDanglingLink()
    const r = await runCliInProcess(["ask", "hi", "-m", "od/one", "--output-dir", outputDir], { env: provider.cliEnv(tempDir()) })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`cannot create the output directory ${outputDir} (--output-dir): no such file or directory`)
  })

  it("serve: the server's start names the setting to change", async () => {
    const outputDir = underDanglingLink()
    const env = { XDG_CONFIG_HOME: tempDir(), OPENROUTER_API_KEY: "sk-test", PARALLEL_LLM_OUTPUT_DIR: outputDir }
    const degraded = await Effect.runPromise(loadDegraded({ flags: {}, env }).pipe(Effect.provide(NodeFileSystem.layer)))
    expect(degraded.problems.map((p) => p.message)).toEqual([
      `the output directory ${outputDir} cannot be created (no such file or directory): set PARALLEL_LLM_OUTPUT_DIR to a ` +
      "directory this server may write, then restart the server."
    ])
  })

  it("makeDirectories still makes every missing parent, accepts a directory already there, and refuses a file in the way", async () => {
    const root = tempDir()
    const deep = path.join(root, "a", "b", "c")
    const make = (dir: string) =>
      Effect.runPromise(
        FileSystem.FileSystem.pipe(
          Effect.flatMap((files) => Effect.either(makeDirectories(files, dir, 0o700))),
          Effect.provide(NodeFileSystem.layer)
        )
      )
    expect((await make(deep))._tag).toBe("Right")
    expect(fs.statSync(deep).isDirectory()).toBe(true)
    expect(fs.statSync(deep).mode & 0o777).toBe(0o700)
    expect((await make(deep))._tag).toBe("Right")
    fs.writeFileSync(path.join(root, "file"), "")
    expect((await make(path.join(root, "file")))._tag).toBe("Left")
  })
})
