import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type CallToolResult,
  type ClientCapabilities,
  ListResourcesResultSchema,
  ListToolsResultSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { APP_MIME_TYPE, rendersApps, RUN_VIEW_URI, UI_EXTENSION } from "../../src/mcp/appView.js"
import type { ViewerData } from "../../src/mcp/site/viewerData.js"
import { tools } from "../../src/mcp/tools/index.js"
import { connectInProcessWith, serverServices } from "../support/inProcessMcp.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { repoRoot } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestLogging } from "../support/testLogging.js"
import { layerTestSettings } from "../support/testSettings.js"

// The run viewer as an MCP App, as two clients see one server: one that renders apps (it declares the
// io.modelcontextprotocol/ui extension) and one that does not, which must see exactly what it saw before.

const tempDir = makeTempDirs("pllm-mcp-app-")
const APPS: ClientCapabilities = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } }
const VIEW_TOOLS = ["process_prompt", "get_run", "continue_run", "resynthesize"]

/** Both clients, on one run store and one scripted provider. */
const withClients = <A>(test: (clients: { readonly plain: Client; readonly apps: Client }) => Effect.Effect<A>) =>
  Effect.gen(function*() {
    const provider = yield* makeScriptedClient({ "test/synth": [{ answer: "Merged: 4." }] })
    const services = serverServices(layerTestSettings({ outputDir: tempDir() }), provider.layer, layerTestLogging([]))
    return yield* Effect.gen(function*() {
      const plain = yield* connectInProcessWith()
      const apps = yield* connectInProcessWith(APPS)
      return yield* test({ plain, apps })
    }).pipe(Effect.provide(services))
  }).pipe(Effect.scoped)

const listTools = (client: Client) => Effect.promise(() => client.request({ method: "tools/list" }, ListToolsResultSchema))
const listResources = (client: Client) => Effect.promise(() => client.request({ method: "resources/list" }, ListResourcesResultSchema))
const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)

describe("the MCP App", () => {
  it("is for clients that declare the extension (with our MIME type, when they list theirs)", () => {
    expect(rendersApps(undefined)).toBe(false)
    expect(rendersApps({})).toBe(false)
    expect(rendersApps({ extensions: { "io.example/other": {} } })).toBe(false)
    expect(rendersApps({ extensions: { [UI_EXTENSION]: {} } })).toBe(true)
    expect(rendersApps(APPS)).toBe(true)
    expect(rendersApps({ extensions: { [UI_EXTENSION]: { mimeTypes: ["text/html+skybridge"] } } })).toBe(false)
  })

  itLive.effect(
    "a text-only client's tools/list, results and resources/list are what they were, byte for byte",
    () =>
      withClients(({ apps, plain }) =>
        Effect.gen(function*() {
          const list = yield* listTools(plain)
          // What tools/list answered before the app: each tool's own definition, nothing added.
          expect(JSON.stringify(list)).toBe(JSON.stringify({ tools: tools.map((tool) => tool.definition) }))
          expect(JSON.stringify(list)).not.toMatch(/_meta|ui:\/\/|get_run_view/)
          const first = yield* call(plain, "process_prompt", { prompt: "What is 2+2?" })
          const { runId } = first.structuredContent as { readonly runId: string }
          expect(JSON.stringify(first)).not.toMatch(/_meta|ui:\/\//)
          // The same run answers alike whoever asks: the app adds nothing to a result.
          const forPlain = yield* call(plain, "get_run", { runId })
          const forApps = yield* call(apps, "get_run", { runId })
          expect(JSON.stringify(forPlain)).toBe(JSON.stringify(forApps))
          const resources = yield* listResources(plain)
          expect(resources.resources.map((r) => r.uri)).not.toContain(RUN_VIEW_URI)
          expect((yield* listResources(apps)).resources.slice(1)).toEqual(resources.resources)
          // The page's own tool does not exist for it.
          const refused = yield* Effect.promise(() => plain.callTool({ name: "get_run_view", arguments: { runId } }).then(() => "", String))
          expect(refused).toMatch(/Unknown tool: get_run_view/)
        })
      )
  )

  itLive.effect(
    "a client that renders apps sees the four run tools point at the page, and the page's own tool as app-only",
    () =>
      withClients(({ apps }) =>
        Effect.gen(function*() {
          const list = yield* listTools(apps)
          const withMeta = list.tools.filter((tool) => tool._meta !== undefined)
          expect(withMeta.map((tool) => tool.name)).toEqual([...VIEW_TOOLS, "get_run_view"])
          for (const tool of withMeta) {
            expect(tool._meta?.ui, tool.name).toEqual(
              tool.name === "get_run_view" ? { resourceUri: RUN_VIEW_URI, visibility: ["app"] } : { resourceUri: RUN_VIEW_URI }
            )
            expect(tool._meta?.["ui/resourceUri"], tool.name).toBe(RUN_VIEW_URI)
          }
          // Apart from `_meta` and the app-only tool, the same list as a text-only client's.
          expect(list.tools.filter((t) => t.name !== "get_run_view").map(({ _meta, ...rest }) => rest)).toEqual(
            tools.map((tool) => tool.definition)
          )
          const first = yield* call(apps, "process_prompt", { prompt: "What is 2+2?" })
          const { runId } = first.structuredContent as { readonly runId: string }
          const view = yield* call(apps, "get_run_view", { runId })
          expect(view.isError).toBeFalsy()
          const data = view.structuredContent as unknown as ViewerData
          expect(data.view.runId).toBe(runId)
          expect(data.view.final).toBe("Merged: 4.")
          expect(data.manifest?.status).toBe("ok")
          expect(Object.keys(data.texts).some((file) => file.startsWith("responses/"))).toBe(true)
          const unknown = yield* call(apps, "get_run_view", { runId: "no-such-run" })
          expect(unknown.isError).toBe(true)
        })
      )
  )

  itLive.effect(
    "resources/read of the page answers the built dist/viewer.html as text/html;profile=mcp-app",
    () =>
      withClients(({ apps, plain }) =>
        Effect.gen(function*() {
          const page = path.join(repoRoot, "dist", "viewer.html")
          if (!fs.existsSync(page)) execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "ignore" })
          const listed = yield* listResources(apps)
          expect(listed.resources[0]).toMatchObject({ uri: RUN_VIEW_URI, mimeType: APP_MIME_TYPE })
          const read = yield* Effect.promise(() => apps.readResource({ uri: RUN_VIEW_URI }))
          expect(read.contents).toEqual([{ uri: RUN_VIEW_URI, mimeType: APP_MIME_TYPE, text: fs.readFileSync(page, "utf8") }])
          // A static page: whoever reads it gets it.
          expect((yield* Effect.promise(() => plain.readResource({ uri: RUN_VIEW_URI }))).contents).toEqual(read.contents)
        })
      )
  )
})
