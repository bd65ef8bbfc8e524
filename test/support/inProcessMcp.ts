import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js"
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Context, Effect, Exit, Layer, Option, Scope, TestClock, TestContext } from "effect"
import { layerStartupWarnings } from "../../src/appLayer.js"
import { openConnection } from "../../src/mcp/connection.js"
import { makeLiveRuns } from "../../src/mcp/liveRuns.js"
import { makeRedactor } from "../../src/mcp/redact.js"
import type { ToolServices } from "../../src/mcp/tools/tool.js"
import { CallGate } from "../../src/services/callGate.js"
import { Logging } from "../../src/services/logging.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { loadDegraded, StartupProblems } from "../../src/settings/degraded.js"
import { realHttpClientLayer, sharedHttpClientLayer } from "./realHttpClient.js"
import { pendingSleeps } from "./testClock.js"

// The MCP server in this process, as a client sees it: the SDK's own Client over the SDK's in-memory
// transport, connected to one real connection (openConnection) over the layers a test picks. The
// client validates every structured result against the tool's outputSchema, as clients do.

/**
 * The SDK's own validator (Ajv), shared by every test client in the worker and compiling each distinct schema once:
 * a Client compiles every tool's outputSchema again on each listTools, about 0.8 s of CPU per worker for the same
 * few schemas. It still checks every structured result against the schema listed.
 */
const compiled = new Map<string, JsonSchemaValidator<unknown>>()
const ajv = new AjvJsonSchemaValidator()
const sharedSchemaValidator: jsonSchemaValidator = {
  getValidator: <T>(schema: Parameters<jsonSchemaValidator["getValidator"]>[0]) => {
    const key = JSON.stringify(schema)
    const validate = compiled.get(key) ?? ajv.getValidator<unknown>(schema)
    if (!compiled.has(key)) compiled.set(key, validate)
    // The schema says what T is, as it does for the SDK's own getValidator<T>: the cache keeps them as unknown.
    return validate as JsonSchemaValidator<T>
  }
}

/** The services a server connection runs on, from settings and a provider double: a real RunStore on disk. */
export const serverServices = (
  settings: Layer.Layer<Settings>,
  client: Layer.Layer<ModelClient>,
  logging: Layer.Layer<Logging>
): Layer.Layer<ToolServices | Logging> =>
  Layer.mergeAll(RunStore.DefaultWithoutDependencies, client, logging, NodeFileSystem.layer, NodePath.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(settings, NodeFileSystem.layer, NodePath.layer))
  )

/**
 * A client declaring `capabilities` (none by default) connected to a server connection on the current services,
 * closed with the scope; it has listed the tools.
 */
export const connectInProcessWith = (
  capabilities?: ClientCapabilities
): Effect.Effect<Client, never, Scope.Scope | ToolServices | Logging> =>
  Effect.gen(function*() {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const runs = yield* makeLiveRuns
    yield* openConnection(serverSide, { version: "test", runs, redactor: makeRedactor(Option.none()), onClose: () => undefined })
    const client = new Client({ name: "in-process-test", version: "1.0.0" }, {
      jsonSchemaValidator: sharedSchemaValidator,
      ...(capabilities !== undefined ? { capabilities } : {})
    })
    yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
    // The client checks structured results only against the schemas it has listed.
    yield* Effect.promise(() => client.listTools())
    return client
  })

/** A client that declares no capabilities, connected as `connectInProcessWith` does. */
export const connectInProcess = connectInProcessWith()

/** A connection to a server in this process, shaped like mcpHarness's `McpConnection` (no transport). */
export interface InProcessConnection {
  readonly client: Client
  /** Every line the server logged so far, as `serve` writes them on stderr. */
  readonly stderr: () => string
  /** Closes the client, then the server: every run still going is interrupted and awaited, as `serve` does. */
  readonly close: () => Promise<void>
  /**
   * With `{ testClock: true }`: the server's clock, moved only by the test (`Effect.runPromise(clock.adjust(…))`).
   * Its HTTP and files stay real; a deadline, a timeout or a backoff waits until the test moves the clock past it.
   */
  readonly clock?: TestClock.TestClock
}

/**
 * The server `serve` starts from this environment (see mcpHarness's `serverEnv`), in this process: settings
 * loaded as serve loads them (degraded when they are wrong, each problem logged once), the real HTTP client (on the
 * worker's kept Agent, unless `ownHttpClient`: realHttpClient.ts) and call gate, the real run store; log lines are kept
 * for `stderr()` instead of printed. For tests where the process is not the point.
 */
export const connectMcpInProcess = async (
  env: Readonly<Record<string, string>>,
  capabilities?: ClientCapabilities,
  options: {
    readonly testClock?: boolean
    /** The server's own Agent, as `serve` builds it: for a test that counts the provider's connections. */
    readonly ownHttpClient?: boolean
  } = {}
): Promise<InProcessConnection> => {
  const lines: Array<string> = []
  const services = Layer.unwrapEffect(Effect.map(loadDegraded({ flags: {}, env }), ({ loaded, problems }) => {
    const settings = Layer.succeedContext(
      Context.make(Settings, Settings.make(loaded.settings)).pipe(Context.add(StartupProblems, problems))
    )
    const logging = Logging.Test(loaded.settings, [], (line) => void lines.push(line))
    // Logging provided to the others (as appLayer.ts does), so the graph names each layer once: each costs its building.
    return Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies, CallGate.fromMaxInFlight, layerStartupWarnings).pipe(
      Layer.provideMerge(logging),
      Layer.provide(
        Layer.mergeAll(options.ownHttpClient === true ? realHttpClientLayer : sharedHttpClientLayer, NodeFileSystem.layer, NodePath.layer)
      ),
      Layer.provideMerge(Layer.mergeAll(settings, NodeFileSystem.layer, NodePath.layer))
    )
  })).pipe(Layer.provide(NodeFileSystem.layer))
  const scope = Effect.runSync(Scope.make())
  // The services live in the connection's scope, not only while connecting.
  const [client, clock] = await Effect.runPromise(
    Effect.gen(function*() {
      // Built first, in this fiber: the connection's runtime (its every fiber) then runs on this clock.
      const clock = options.testClock === true
        ? Option.some(yield* Layer.buildWithScope(TestContext.TestContext, scope).pipe(Effect.zipRight(TestClock.testClock())))
        : Option.none()
      const context = yield* Layer.buildWithScope(services, scope)
      const client = yield* connectInProcessWith(capabilities).pipe(Effect.provide(context), Scope.extend(scope))
      return [client, clock] as const
    }).pipe(Effect.orDie)
  )
  return {
    client,
    stderr: () => lines.join(""),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
    ...(Option.isSome(clock) ? { clock: clock.value } : {})
  }
}

/** The TestClock of a connection made with `{ testClock: true }`. */
export const testClockOf = (connection: InProcessConnection): TestClock.TestClock => {
  if (connection.clock === undefined) throw new Error("this connection runs on the real clock: connect with { testClock: true }")
  return connection.clock
}

/**
 * Waits, in real time, until a sleep less than `belowMs` ahead of the connection's clock is pending, and returns how far
 * ahead it is: a wait the server has just started (a backoff), among longer ones (the calls' budgets).
 */
export const pendingSleepBelow = (clock: TestClock.TestClock, belowMs: number, timeoutMs = 20_000): Promise<number> =>
  Effect.runPromise(
    pendingSleeps((ahead) => (ahead[0] ?? Infinity) < belowMs, timeoutMs).pipe(
      Effect.map((ahead) => ahead[0] ?? 0),
      Effect.withClock(clock)
    )
  )
