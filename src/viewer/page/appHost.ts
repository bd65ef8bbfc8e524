import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { RunOutput } from "../../mcp/runOutput.js"
import {
  type ActionInput,
  type ActionName,
  type Availability,
  POLL_INTERVAL_MS,
  type ViewerData,
  type ViewerHost
} from "../../mcp/site/viewerData.js"

// The page's host inside an MCP Apps client (the io.modelcontextprotocol/ui extension, protocol 2026-01-26):
// JSON-RPC over postMessage with the parent frame. The page says `ui/initialize`, the host sends it the tool's
// input and result as notifications, and every later fact or action is a `tools/call` the host relays to this
// server: get_run_view (the page's own tool) while the run goes on, cancel_run, resynthesize, continue_run.
// Written to the spec rather than with @modelcontextprotocol/ext-apps' App class, which would bring the MCP SDK's
// protocol layer and zod into the page (about 330 KB, and zod probes `new Function`, which the hosts' default
// content security policy refuses).

const PROTOCOL_VERSION = "2026-01-26"
/** A host that never answers leaves the page saying so, not waiting forever. */
const REQUEST_TIMEOUT_MS = 120_000

type Json = Readonly<Record<string, unknown>>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

interface Pending {
  readonly resolve: (result: Json) => void
  readonly reject: (error: Error) => void
}

/** The JSON-RPC side of the page: requests to the host, its answers, its notifications. */
const connect = (onNotification: (method: string, params: Json) => void) => {
  const parent = window.parent
  const pending = new Map<number, Pending>()
  let nextId = 1
  const post = (message: Json) => parent.postMessage({ jsonrpc: "2.0", ...message }, "*")
  window.addEventListener("message", (event: MessageEvent<unknown>) => {
    const message = event.data
    if (event.source !== parent || !isObject(message) || message.jsonrpc !== "2.0") return
    const { error, id, method, params, result } = message
    if (typeof method === "string") {
      if (id === undefined) return onNotification(method, isObject(params) ? params : {})
      // Requests of the host: a ping, or the teardown before the frame goes away; nothing else is offered.
      const known = method === "ping" || method === "ui/resource-teardown"
      return post(known ? { id, result: {} } : { id, error: { code: -32601, message: `Method not found: ${method}` } })
    }
    const waiting = typeof id === "number" ? pending.get(id) : undefined
    if (waiting === undefined) return
    pending.delete(id as number)
    if (isObject(error)) waiting.reject(new Error(typeof error.message === "string" ? error.message : "the host refused"))
    else waiting.resolve(isObject(result) ? result : {})
  })
  const request = (method: string, params: Json): Promise<Json> =>
    new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`the host did not answer ${method}`))
      }, REQUEST_TIMEOUT_MS)
      const done = <A>(f: (a: A) => void) => (a: A) => {
        clearTimeout(timer)
        f(a)
      }
      pending.set(id, { resolve: done(resolve), reject: done(reject) })
      post({ id, method, params })
    })
  const notify = (method: string, params: Json = {}) => post({ method, params })
  return { request, notify }
}

/** The text of a tool result, for an error to show. */
const textOf = (result: Json): string => {
  const content = Array.isArray(result.content) ? result.content : []
  const first = content.find((block: unknown) => isObject(block) && typeof block.text === "string") as { text: string } | undefined
  return (first?.text ?? "no text").slice(0, 500)
}

/** `structuredContent` of a run-shaped tool result, when there is one. */
const runOutputOf = (result: Json): RunOutput | undefined => {
  const structured = result.structuredContent
  return isObject(structured) && typeof structured.runId === "string" && typeof structured.status === "string"
    ? structured as unknown as RunOutput
    : undefined
}

const applyTheme = (context: unknown) => {
  const theme = isObject(context) ? context.theme : undefined
  if (theme !== "light" && theme !== "dark") return
  document.documentElement.dataset.theme = theme
  document.documentElement.style.colorScheme = theme
}

type Rpc = ReturnType<typeof connect>

/**
 * `ui/initialize`, then `ui/notifications/initialized`; from then on the host hears of the page's size. Resolves
 * with whether the host relays `tools/call` to the server (`hostCapabilities.serverTools`).
 */
const initialize = (rpc: Rpc): Promise<boolean> =>
  rpc.request("ui/initialize", {
    appInfo: { name: "parallel-llm run viewer", version: "1" },
    appCapabilities: {},
    protocolVersion: PROTOCOL_VERSION
  }).then((answer) => {
    applyTheme(answer.hostContext)
    rpc.notify("ui/notifications/initialized")
    // The host sizes the frame to the page (the page's own box: a frame taller than the page may shrink again).
    const root = document.documentElement
    new ResizeObserver(() => {
      const box = root.getBoundingClientRect()
      rpc.notify("ui/notifications/size-changed", { width: Math.ceil(box.width), height: Math.ceil(box.height) })
    }).observe(root)
    return isObject(answer.hostCapabilities) && isObject(answer.hostCapabilities.serverTools)
  })

/** What an action did: a line to show, and the run it started (a re-synthesis, a follow-up), which the page follows. */
interface Acted {
  readonly said: string
  readonly started?: string | undefined
}

/** The actions, each through the server's own tool. */
const act = async (
  callTool: (name: string, args: Json) => Promise<Json>,
  runId: string,
  action: ActionName,
  input: ActionInput
): Promise<Acted> => {
  switch (action) {
    case "cancel":
      await callTool("cancel_run", { runId })
      return { said: "Cancelled." }
    case "resynthesize": {
      const synthesizer = input.synthesizer?.trim()
      const started = runOutputOf(await callTool("resynthesize", { runId, wait: 0, ...(synthesizer ? { synthesizer } : {}) }))?.runId
      return { said: `Re-synthesis started: run ${started ?? "?"}; shown here.`, started }
    }
    case "followUp": {
      const prompt = input.prompt?.trim() ?? ""
      if (prompt === "") throw new Error("Write the follow-up question first.")
      const started = runOutputOf(await callTool("continue_run", { runId, prompt, wait: 0 }))?.runId
      return { said: `Follow-up started: run ${started ?? "?"}; shown here.`, started }
    }
  }
}

const NO_RELAY: Availability = { available: false, why: "This host does not pass the page's tool calls to the server." }

const availabilityOf = (data: ViewerData, relays: boolean): Readonly<Record<ActionName, Availability>> => {
  const running = data.view.status === "running"
  const yes: Availability = { available: true }
  if (!relays) return { cancel: NO_RELAY, resynthesize: NO_RELAY, followUp: NO_RELAY }
  return {
    cancel: running ? yes : { available: false, why: "The run is not running." },
    resynthesize: running ? { available: false, why: "Once the run has ended." } : yes,
    followUp: !running && data.view.final !== null ? yes : { available: false, why: "Once the run has an answer." }
  }
}

/**
 * When to load again: the tool result first, then at once the run's files; then every 2 s while the run goes on, or
 * while the page still shows another run than the one it follows (its first look at the run an action started failed).
 */
const nextLoadOf = (data: ViewerData, fromToolResult: boolean, following: string | undefined): number | undefined =>
  fromToolResult ? 0 : data.view.status === "running" || data.view.runId !== following ? POLL_INTERVAL_MS : undefined

/** A server tool called through the host, once the host has answered `ui/initialize`; an `isError` result throws. */
const toolCaller = (rpc: ReturnType<typeof connect>, ready: Promise<unknown>) => async (name: string, args: Json): Promise<Json> => {
  await ready
  const result = (await rpc.request("tools/call", { name, arguments: args })) as Partial<CallToolResult>
  if (result.isError === true) throw new Error(textOf(result))
  return result
}

export const appHost = (): ViewerHost => {
  let settle: { resolve: (result: Json) => void; reject: (error: Error) => void } | undefined
  const toolResult = new Promise<Json>((resolve, reject) => (settle = { resolve, reject }))
  const rpc = connect((method, params) => {
    if (method === "ui/notifications/tool-result") settle?.resolve(params)
    else if (method === "ui/notifications/tool-cancelled") {
      settle?.reject(new Error(`the tool call was cancelled${typeof params.reason === "string" ? ` (${params.reason})` : ""}`))
    } else if (method === "ui/notifications/host-context-changed") applyTheme(params)
  })
  const ready = initialize(rpc)
  let relays = false
  const callTool = toolCaller(rpc, ready)

  let runId: string | undefined
  /** The run as last seen; whether that came from the tool result (a summary: the run's files come from get_run_view). */
  let last: ViewerData | undefined
  let fromToolResult = false
  /** Ends the page's wait on a finished run: set while it waits (`switched`). */
  let wake = (): void => {}
  const fetchRun = async (id: string): Promise<ViewerData> => {
    const data = (await callTool("get_run_view", { runId: id })).structuredContent
    if (!isObject(data) || runOutputOf({ structuredContent: data.view }) === undefined) throw new Error("get_run_view answered no run")
    return data as unknown as ViewerData
  }
  return {
    load: async (): Promise<ViewerData> => {
      if (runId === undefined || last === undefined) {
        relays = await ready
        const result = await toolResult
        const view = runOutputOf(result)
        if (view === undefined) throw new Error(textOf(result))
        runId = view.runId
        fromToolResult = true
        last = { view, manifest: null, texts: {}, thread: [] }
        return last
      }
      fromToolResult = false
      // A failed look keeps the run as last seen, saying why it is not updated.
      const seen = last
      return fetchRun(runId).then(
        (data) => (last = data),
        (error: unknown): ViewerData => ({
          ...seen,
          view: { ...seen.view, summary: `${seen.view.summary} (Not updated: ${error instanceof Error ? error.message : String(error)})` }
        })
      )
    },
    nextLoadIn: (data) => (relays ? nextLoadOf(data, fromToolResult, runId) : undefined),
    availability: (data) => availabilityOf(data, relays),
    act: async (action, input) => {
      if (runId === undefined) throw new Error("No run yet.")
      const { said, started } = await act(callTool, runId, action, input)
      // The page goes on with the run the action started: loaded at once, then followed while it runs.
      if (started !== undefined) {
        runId = started
        wake()
      }
      return said
    },
    switched: () => new Promise<void>((resolve) => (wake = resolve))
  }
}
