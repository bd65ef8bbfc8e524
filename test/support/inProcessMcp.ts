import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Effect, Layer, Option, type Scope } from "effect"
import { openConnection } from "../../src/mcp/connection.js"
import { makeLiveRuns } from "../../src/mcp/liveRuns.js"
import { makeRedactor } from "../../src/mcp/redact.js"
import type { ToolServices } from "../../src/mcp/tools/tool.js"
import type { Logging } from "../../src/services/Logging.js"
import type { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/RunStore.js"
import type { Settings } from "../../src/services/Settings.js"

// The MCP server in this process, as a client sees it: the SDK's own Client over the SDK's in-memory
// transport, connected to one real connection (openConnection) over the layers a test picks. The
// client validates every structured result against the tool's outputSchema, as clients do.

/** The services a server connection runs on, from settings and a provider double: a real RunStore on disk. */
export const serverServices = (
  settings: Layer.Layer<Settings>,
  client: Layer.Layer<ModelClient>,
  logging: Layer.Layer<Logging>
): Layer.Layer<ToolServices | Logging> =>
  Layer.mergeAll(RunStore.DefaultWithoutDependencies, client, logging, NodeFileSystem.layer, NodePath.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(settings, NodeFileSystem.layer, NodePath.layer))
  )

/** A client connected to a server connection on the current services, closed with the scope; it has listed the tools. */
export const connectInProcess: Effect.Effect<Client, never, Scope.Scope | ToolServices | Logging> = Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const runs = yield* makeLiveRuns
  yield* openConnection(serverSide, { version: "test", runs, redactor: makeRedactor(Option.none()), onClose: () => undefined })
  const client = new Client({ name: "in-process-test", version: "1.0.0" })
  yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
  // The client checks structured results only against the schemas it has listed.
  yield* Effect.promise(() => client.listTools())
  return client
})
