import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, Logger, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { listedUnwritten, UNWRITTEN_LISTED } from "../../src/programs/run/writes.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { sharedHttpClientLayer } from "../support/realHttpClient.js"
import { noSpaceError, storeDiskWith } from "../support/storeDiskDoubles.js"
import { recordOf } from "../support/strategyRecord.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 23, finding 17: a full disk during `rank`. Writes that failed are tried once more when the others have
// ended (space freed by a failed big write comes back at once); what still fails is listed as unwritten, and
// no record (candidate, label, judge) names a file that is not on disk.

const tempDir = makeTempDirs("pllm-unwritten-")
const ok = (content: string) => [{ kind: "ok" as const, content }, { kind: "ok" as const, content: "RANKING: A > B > C" }]
const provider = withFakeProvider({
  script: {
    "test/alpha": ok("alpha thinks 4"),
    "test/beta": ok("beta thinks 5"),
    "test/gamma": ok("gamma thinks 4"),
    "test/synth": { kind: "ok", content: "It is 4." }
  }
})

/**
 * Node's disk, but the first `times` writes of each file named (`responses/01-x.md`, relative to a
 * run directory) fail as a full disk does; the run store writes a temporary sibling `.<name>.<tag>.tmp` first.
 */
const failingWrites = (files: Readonly<Record<string, number>>) => {
  const left = new Map(Object.entries(files))
  const failsNow = (target: string) => {
    for (const [file, times] of left) {
      if (times > 0 && target.includes(`/${path.dirname(file)}/.${path.basename(file)}.`)) {
        left.set(file, times - 1)
        return true
      }
    }
    return false
  }
  return storeDiskWith((real) => ({
    // Decided when the write runs, as the disk would: the same file written again may succeed.
    writeFile: (target, data, options, done) =>
      failsNow(target) ? process.nextTick(() => done(noSpaceError(target))) : real.writeFile(target, data, options, done)
  }))
}

describe("a full disk while the judges rank", () => {
  it("retries the unwritten answers once, and records name only the files on disk", async () => {
    const settings = provider.settings({
      apiKey: Option.none(),
      outputDir: tempDir(),
      models: ["test/alpha", "test/beta", "test/gamma"],
      synthesizer: "test/synth",
      retries: 0
    })
    const layer = Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(
        sharedHttpClientLayer,
        failingWrites({ "responses/01-test-alpha.md": 1, "responses/02-test-beta.md": 1, "rankings/02-test-beta.md": 2 }),
        NodeFileSystem.layer,
        NodePath.layer
      )),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
    const result = await Effect.runPromise(
      runPipeline({ prompt: "What is 2+2?" }).pipe(withCallSettings({ strategy: "rank" }), Effect.provide(layer))
    )
    const { manifest, runDir } = result
    const onDisk = (file: string) => fs.existsSync(path.join(runDir, file))

    // Failed once, written at the second try: on disk and named.
    expect(manifest.candidates.map((c) => c.file)).toEqual([
      "responses/01-test-alpha.md",
      "responses/02-test-beta.md",
      "responses/03-test-gamma.md"
    ])
    expect(fs.readFileSync(path.join(runDir, "responses/01-test-alpha.md"), "utf8")).toBe("alpha thinks 4")
    // Failed twice: not on disk, not named, listed as unwritten.
    expect(onDisk("rankings/02-test-beta.md")).toBe(false)
    expect(manifest.unwritten?.map((u) => u.file)).toEqual(["rankings/02-test-beta.md"])
    const judges = recordOf(manifest, "rank").judges ?? []
    expect(judges.map((j) => j.file)).toEqual(["rankings/01-test-alpha.md", undefined, "rankings/03-test-gamma.md"])
    expect(judges[1]?.writeError).toContain("no space left on device")
    // Every file any record names is there.
    const named = [
      ...manifest.candidates.map((c) => c.file),
      ...judges.map((j) => j.file),
      ...(recordOf(manifest, "rank").labels ?? []).map((l) => l.file),
      manifest.synthesis?.file
    ].filter((file): file is string => file !== undefined)
    expect(named.filter((file) => !onDisk(file))).toEqual([])
    expect(manifest.status).toBe("partial")
  })
})

describe("the unwritten list of a manifest", () => {
  it(`names at most ${UNWRITTEN_LISTED} files, then counts the others`, () => {
    const all = Array.from({ length: 5_000 }, (_, i) => ({ file: `attachments/${i}-x.txt`, message: "ENOSPC" }))
    const listed = listedUnwritten(all)
    expect(listed).toHaveLength(UNWRITTEN_LISTED + 1)
    expect(listed.at(-1)).toEqual({ file: "…", message: `${5_000 - UNWRITTEN_LISTED} more files could not be written either` })
    expect(listedUnwritten(all.slice(0, 3))).toEqual(all.slice(0, 3))
  })
})
