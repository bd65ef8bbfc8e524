import { Either, Schema } from "effect"
import type { CliAgentName } from "../../../domain/cliAgent.js"
import { AgentUnavailable, InvalidResponse, type ProviderError, ProviderFailure, RateLimited } from "../../../domain/errors.js"
import type { ModelPart } from "../../../domain/modelCall.js"
import { oneLine, stripControl } from "../../../domain/text.js"
import type { LineDecoder } from "./agentProcess.js"

// What each CLI agent module (claudeCode.ts, codex.ts, geminiCli.ts) declares, and the helpers they share.

/** One call as a CLI sees it. */
export interface AgentCall {
  /** The model for the CLI's own model flag; none: the CLI's default. */
  readonly model: string | undefined
  /** The system message, for a CLI with a flag of its own for it. */
  readonly system: string | undefined
  /** A fresh directory of the call's own, outside the working directory, for a CLI's config (gemini-cli). */
  readonly scratch: string
  /** The user's home, where the CLI keeps its login. */
  readonly home: string
  /** Images among the attachments, in the working directory (a CLI that takes them by flag: codex). */
  readonly images: ReadonlyArray<string>
}

/** A file a CLI needs before it starts: written (`text`) or linked to the user's own (`linkTo`, when it exists). */
export type AgentFile =
  | { readonly path: string; readonly text: string }
  | { readonly path: string; readonly linkTo: string }

export interface AgentCli {
  readonly name: CliAgentName
  readonly executable: string
  /** How to install it. */
  readonly install: string
  /** What to run to log in. */
  readonly login: string
  /** Whether the system message goes by flag (else it is put before the prompt). */
  readonly systemFlag: boolean
  readonly args: (call: AgentCall) => ReadonlyArray<string>
  /** Variables set for the CLI (over the inherited environment). */
  readonly env: (call: AgentCall, inherited: Readonly<Record<string, string>>) => Readonly<Record<string, string>>
  readonly files: (call: AgentCall, inherited: Readonly<Record<string, string>>) => ReadonlyArray<AgentFile>
  readonly decoder: (model: string) => LineDecoder
  /** Args that print whether the CLI is logged in without a model call, and how to read the answer; none: it cannot say. */
  readonly loginCheck?: { readonly args: ReadonlyArray<string>; readonly loggedIn: (exitCode: number, output: string) => boolean }
}

/** One line of a CLI's text in an error message: controls stripped, cut short. */
const cliLine = (text: string): string => {
  const line = oneLine(stripControl(text))
  return line.length > 240 ? `${line.slice(0, 240)}…` : line
}

const LOGIN =
  /not logged in|please run \/login|log ?in|unauthori[sz]ed|unauthenticated|authentication|api.?key|credential|auth method|\b401\b|\b403\b/i
const UNKNOWN_MODEL =
  /model.{0,80}(not found|does not exist|not exist|unknown|invalid|not supported|not available)|unknown model|invalid model|\b404\b/i
const RATE = /rate.?limit|too many requests|quota|resource.?exhausted|\b429\b/i
const OVERLOAD = /overload|unavailable|internal server error|bad gateway|\b5\d\d\b/i

/**
 * What a CLI's failure means, from the HTTP status it reports (when it does) or its text: not logged in and unknown
 * model are permanent and say what to run; rate limits and overload are transient (retried by `callModel`).
 */
export const agentFailure = (cli: AgentCli, model: string, status: number | undefined, text: string): ProviderError => {
  const detail = cliLine(text)
  const says = (pattern: RegExp) => status === undefined && pattern.test(text)
  if (status === 401 || status === 403 || says(LOGIN)) {
    return new AgentUnavailable({ model, message: `${cli.name} is not logged in or its key was refused: run \`${cli.login}\` (${detail})` })
  }
  if (status === 404 || says(UNKNOWN_MODEL)) {
    return new AgentUnavailable({ model, message: `${cli.name} does not know the model of ${model}: name another (${detail})` })
  }
  if (status === 429 || says(RATE)) return new RateLimited({ model, httpStatus: 429, message: `${cli.name}: rate limited (${detail})` })
  if ((status !== undefined && status >= 500) || says(OVERLOAD)) {
    return new ProviderFailure({ model, httpStatus: status ?? 503, message: `${cli.name}: overloaded (${detail})` })
  }
  return new InvalidResponse({ model, message: `${cli.name} failed: ${detail || "no message"}` })
}

/** The end of a CLI that stopped without its final event: a failure from its stderr, or an answer cut short. */
export const exitFailure = (cli: AgentCli, model: string) => (code: number | undefined, stderr: string): ProviderError =>
  code === 0 || stderr.trim() === ""
    ? new InvalidResponse({ model, message: `${cli.name} ended (exit ${code ?? "by signal"}) without a final answer` })
    : agentFailure(cli, model, undefined, stderr)

/** An HTTP status inside a CLI's error text (`"code":429`, `status 401`), when there is one. */
export const statusIn = (text: string): number | undefined => {
  const found = /"code"\s*:\s*(\d{3})|status:? (\d{3})|\b(\d{3}) (?:Unauthorized|Forbidden|Not Found|Too Many Requests)/i.exec(text)
  const digits = found?.[1] ?? found?.[2] ?? found?.[3]
  return digits === undefined ? undefined : Number(digits)
}

/** A decoder of one JSON line into an event of `schema`; a line of another shape (an event we do not use) is none. */
export const lineDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(Schema.parseJson(schema))
  return (line: string): A | undefined => Either.getOrUndefined(decode(line))
}

export const textPart = (value: string): ModelPart => ({ _tag: "TextDelta", text: value })
