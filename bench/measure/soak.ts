/**
 * A long-lived `serve` keeps nothing per answered call (issue 23, finding 6): the stdio server in-process
 * answers 2,000 `process_prompt` calls from the SDK's own client, and the heap after a full collection is
 * compared over the last 1,000. The first 1,000 are warm-up: the server keeps its last 200 finished runs on
 * purpose, and V8's type feedback for the hot paths goes on growing for several hundred calls (from call 200,
 * a build without the leak still grew ~800 bytes a call, from call 1,000 under 400; the leak was 3,000-4,000).
 * test/unit/serveSoak.test.ts holds that leak's cause in a few calls.
 */
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { serveInProcess } from "../../test/support/serveInProcess.js"
import type { BenchContext } from "../context.js"

const CALLS = 2_000
const FROM = 1_000

/**
 * The heap's objects after a full collection. Compiled code is left out: V8 goes on optimizing hot functions
 * for thousands of calls, and that is bounded by the program's size, not by the work it does.
 */
const heapAfterGc = (gc: () => void) => {
  gc()
  gc()
  return v8.getHeapSpaceStatistics().filter((space) => space.space_name !== "code_space" && space.space_name !== "code_large_object_space")
    .reduce((sum, space) => sum + space.space_used_size, 0)
}

export const measureSoak = async (ctx: BenchContext) => {
  v8.setFlagsFromString("--expose-gc")
  const gc = vm.runInNewContext("gc") as () => void
  let before = 0
  let after = 0
  await serveInProcess(CALLS, {
    outputDir: path.join(ctx.tmp, "soak-runs"),
    onCall: (call) => {
      // A collection now and then, as a server's idle moments give: dead fibers' entries in the scheduler's
      // WeakMap are cleared by collections, and between them its table would grow to hold them.
      if (call % 50 === 0) gc()
      if (call === FROM) before = heapAfterGc(gc)
      // While the server still runs: what it keeps goes when it stops.
      if (call === CALLS) after = heapAfterGc(gc)
    }
  })
  ctx.figures["soak.serveHeapBytesPerCall"] = Math.round((after - before) / (CALLS - FROM))
}
