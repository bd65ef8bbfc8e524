import type { Manifest } from "../../domain/manifest.js"
import type { KnownStrategyRecord } from "../../programs/strategies/registry.js"
import type { RunOutput } from "../runOutput.js"

// What the run viewer page is given and what it can ask for: types only, shared by the page (which runs in
// a browser) and the servers that feed it. The page never knows where its data comes from: `runs open`
// serves it over loopback HTTP; an MCP Apps host hands it tool results over postMessage (page/appHost.ts).

/** One earlier turn of a follow-up's thread, oldest first. */
export interface ThreadTurn {
  readonly runId: string
  readonly prompt: string
  readonly answer: string
}

/** A run as the page shows it. */
export interface ViewerData {
  /** `get_run`'s `structuredContent`: status, summary, candidates, synthesis, report, files. */
  readonly view: RunOutput
  /** `run.json`, once the run wrote it: tokens and cost per candidate, the strategy's rankings and rounds. */
  readonly manifest: Manifest | null
  /** The manifest's strategy record with its own fields (rank's judges, refine's rounds), if this version knows the strategy. */
  readonly strategy?: KnownStrategyRecord | undefined
  /** The run's text files by their path in the run (answers, rankings, rounds, prompt), each capped. */
  readonly texts: Readonly<Record<string, string>>
  /** For a follow-up: the turns before this run. */
  readonly thread: ReadonlyArray<ThreadTurn>
  /** While a run of the serving process goes: what it has streamed so far, and what its strategy is doing. */
  readonly live?: LiveProgress
}

/** Known only for a run of the process that serves the page (another process's run tells only its files). */
export interface LiveProgress {
  /** Tokens streamed so far per candidate, in order, and the synthesis last. */
  readonly streamed: ReadonlyArray<number>
  /** What the strategy's step is doing (judges ranking, a refinement round), once it started. */
  readonly stage?: string
}

export const ACTION_NAMES = ["cancel", "resynthesize", "followUp"] as const
export type ActionName = (typeof ACTION_NAMES)[number]

/** Whether the host can do an action for this run, and if not, why (shown beside the disabled button). */
export type Availability = { readonly available: true } | { readonly available: false; readonly why: string }

/** What an action needs: `resynthesize` a synthesizer model, `followUp` a question. */
export interface ActionInput {
  readonly synthesizer?: string
  readonly prompt?: string
}

/** Where the page gets its data and sends its actions: the loopback server (`runs open`) or an MCP host. */
export interface ViewerHost {
  /** The run as it stands now; called again (no faster than every 2 s) while it is running. */
  readonly load: () => Promise<ViewerData>
  /**
   * How long to wait before loading again, or undefined to stop; by default every 2 s while the run is running.
   * (An MCP Apps host is handed a tool result first, a summary: the run's files are loaded at once after it.)
   */
  readonly nextLoadIn?: (data: ViewerData) => number | undefined
  readonly availability: (data: ViewerData) => Readonly<Record<ActionName, Availability>>
  /** Resolves with a line to show (the new run's id, "cancelled"); rejects with why it failed. */
  readonly act: (action: ActionName, input: ActionInput) => Promise<string>
  /** Resolves when the host has another run to show (one an action started): the page then follows it. */
  readonly switched?: () => Promise<void>
}

/** What the loopback server answers at `view.json`: the data, and which actions it offers. */
export interface HttpEnvelope {
  readonly data: ViewerData
  readonly actions: Readonly<Record<ActionName, Availability>>
}

/** The longest text of one file the page is sent; the rest is said to be cut. */
export const VIEWER_TEXT_MAX_CHARS = 200_000
/** How often the page asks again while a run is going. */
export const POLL_INTERVAL_MS = 2_000
