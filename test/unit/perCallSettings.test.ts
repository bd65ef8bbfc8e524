import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Manifest } from "../../src/domain/manifest.js"
import { isRecordOf } from "../../src/programs/strategies/registry.js"
import { type PerCallKey, perCallKeys } from "../../src/settings/perCall.js"
import { settingKeys } from "../../src/settings/table.js"
import { connectInProcess, serverServices } from "../support/inProcessMcp.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestLogging } from "../support/testLogging.js"
import { layerTestSettings } from "../support/testSettings.js"

// A per-call setting is declared once, in the settings table (`perCall`): the tools' input schemas and the
// call's patch of Settings come from that mark. This walks the table against tools/list: every setting a tool
// advertises is one the table marks, and a call giving it changes the run it starts (its manifest says so).

const tempDir = makeTempDirs("pllm-per-call-")

/** How to see that a run took a per-call setting: the value a call gives, and where the manifest shows it. */
interface Observer {
  readonly value: unknown
  /** Other arguments the setting only shows with (grace needs a quorum; rounds a refine). */
  readonly with?: Readonly<Record<string, unknown>>
  readonly seen: (manifest: Manifest) => unknown
  /** What the manifest shows: the value itself unless converted (seconds to milliseconds). */
  readonly expected?: unknown
}

// Typed by the table: a setting newly marked `perCall` does not compile here until the test can observe it.
const observers: { readonly [K in PerCallKey]: Observer } = {
  models: { value: ["test/one", "test/two"], seen: (m) => m.settings.models },
  synthesizer: { value: "test/other-synth", seen: (m) => m.settings.synthesizer },
  deadline: { value: 100, seen: (m) => m.settings.deadlineMs, expected: 100_000 },
  quorum: { value: 2, seen: (m) => m.settings.quorum },
  grace: { value: 0.02, with: { quorum: 3 }, seen: (m) => m.settings.graceMs, expected: 20 },
  rounds: {
    value: 2,
    with: { preset: "refining" },
    seen: (m) => (isRecordOf("refine")(m.strategy) ? m.strategy.rounds?.length : undefined)
  },
  samples: { value: 3, with: { preset: "sampling" }, seen: (m) => (isRecordOf("self")(m.strategy) ? m.strategy.samples : undefined) },
  web: { value: true, seen: (m) => m.settings.web },
  strategy: { value: "rank", seen: (m) => m.strategy?.name },
  preset: { value: "panel", seen: (m) => m.settings.synthesizer, expected: "test/preset-synth" }
}

const isPerCall = (key: string): key is PerCallKey => (perCallKeys as ReadonlyArray<string>).includes(key)

const withServer = <A>(test: (client: Client) => Effect.Effect<A>) =>
  Effect.gen(function*() {
    const provider = yield* makeScriptedClient({})
    const settings = layerTestSettings({
      outputDir: tempDir(),
      presets: {
        panel: { synthesizer: "test/preset-synth" },
        refining: { strategy: "refine" },
        sampling: { strategy: "self" }
      }
    })
    return yield* Effect.flatMap(connectInProcess, test).pipe(
      Effect.provide(serverServices(settings, provider.layer, layerTestLogging([])))
    )
  }).pipe(Effect.scoped)

/** The manifest of the run a tool call started (and waited for). */
const callRun = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.gen(function*() {
    const result = (yield* Effect.promise(() => client.callTool({ name, arguments: args }))) as CallToolResult
    const output = result.structuredContent as { readonly runDir?: string } | undefined
    if (result.isError === true || output?.runDir === undefined) {
      return yield* Effect.die(new Error(`${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content)}`))
    }
    return Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(output.runDir, "run.json"), "utf8")))
  })

describe("per-call settings", () => {
  // Live clock: a grace is waited out for real (20 ms at most).
  it.live(
    "every setting a tool advertises is marked per-call in the table, and a call giving it changes its run",
    () =>
      withServer((client) =>
        Effect.gen(function*() {
          const { tools } = yield* Effect.promise(() => client.listTools())
          // A finished run: what continue_run follows up and resynthesize merges again; the server's own settings.
          const parent = yield* callRun(client, "process_prompt", { prompt: "Q" })
          const required: Record<string, unknown> = { prompt: "Q2", runId: parent.id }
          const advertised = new Set<string>()
          for (const tool of tools) {
            const properties = Object.keys(tool.inputSchema.properties ?? {})
            // A setting of the table a tool takes must be marked per-call: otherwise nothing applies it.
            expect(properties.filter((p) => settingKeys.includes(p as never) && !isPerCall(p)), tool.name).toEqual([])
            const base = Object.fromEntries((tool.inputSchema.required ?? []).map((key) => [key, required[key]]))
            for (const key of properties.filter(isPerCall)) {
              advertised.add(key)
              const observer = observers[key]
              const expected = observer.expected ?? observer.value
              // The server's settings alone would not show it: the call's value is what changes the run.
              expect(observer.seen(parent), `${tool.name} ${key}: the server's own`).not.toEqual(expected)
              const manifest = yield* callRun(client, tool.name, { ...base, ...observer.with, [key]: observer.value })
              expect(observer.seen(manifest), `${tool.name} ${key}`).toEqual(expected)
            }
          }
          // A setting marked per-call that no tool takes is a mark nothing reads.
          expect([...advertised].sort()).toEqual([...perCallKeys].sort())
        })
      ),
    60_000
  )
})
