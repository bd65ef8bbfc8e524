import type { JSONRPCErrorResponse, JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode, RELATED_TASK_META_KEY } from "@modelcontextprotocol/sdk/types.js"
import { Either, ParseResult, Schema } from "effect"
import { stripControl } from "../domain/text.js"

// Protocol errors, both ways.
//
// Outgoing: the SDK answers a request whose params do not match its schema with -32603 (internal error) and
// the whole validation report as the message. Such a request is the client's mistake: it gets -32602
// (invalid params) and one line naming each field instead. Applied to every message the server sends, so it
// covers the SDK's own handlers (initialize, tasks/*, logging/setLevel) as well as ours.
//
// Incoming: a message the SDK's transports cannot parse gets no answer from them (stdio) or a bare
// "Parse error" (HTTP), with a multi-KB Zod report on stderr. Each message is checked here first, with the
// same strictness as the SDK's envelope schema, and junk is answered -32600/-32602 with one short line.

const Issues = Schema.parseJson(Schema.NonEmptyArray(Schema.Struct({
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  message: Schema.String
})))
const decodeIssues = Schema.decodeUnknownEither(Issues)

const fieldOf = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("") || "params"

export const readableErrors = (message: JSONRPCMessage): JSONRPCMessage => {
  if (!("error" in message) || message.error.code !== ErrorCode.InternalError) return message
  const issues = decodeIssues(message.error.message)
  if (Either.isLeft(issues)) return message
  const text = issues.right.map((issue) => `${fieldOf(issue.path)}: ${issue.message}`).join("; ")
  return { ...message, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${text}` } }
}

// The JSON-RPC envelope as the SDK's `JSONRPCMessageSchema` takes it: the top level is strict, params,
// `_meta`, results and error objects may carry more members. Values inside params are never walked here.
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Id = Schema.Union(Schema.String, Schema.Int)
const Meta = Schema.Struct({
  progressToken: Schema.optional(Id),
  [RELATED_TASK_META_KEY]: Schema.optional(Schema.Struct({ taskId: Schema.String }, Rest))
}, Rest)
const Params = Schema.Struct({ _meta: Schema.optional(Meta) }, Rest)
const envelope = {
  request: Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: Id, method: Schema.String, params: Schema.optional(Params) }),
  notification: Schema.Struct({ jsonrpc: Schema.Literal("2.0"), method: Schema.String, params: Schema.optional(Params) }),
  result: Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: Id, result: Schema.Struct({ _meta: Schema.optional(Meta) }, Rest) }),
  error: Schema.Struct({
    jsonrpc: Schema.Literal("2.0"),
    id: Schema.optional(Id),
    error: Schema.Struct({ code: Schema.Int, message: Schema.String }, Rest)
  })
}
/** What each member must be, by its path in the message. */
const EXPECTED: Record<string, string> = {
  jsonrpc: `must be "2.0"`,
  id: "must be a string or an integer",
  method: "must be a string",
  params: "must be an object",
  "params._meta": "must be an object",
  "params._meta.progressToken": "must be a string or an integer",
  [`params._meta.${RELATED_TASK_META_KEY}`]: "must be an object with a string taskId",
  [`params._meta.${RELATED_TASK_META_KEY}.taskId`]: "must be a string",
  result: "must be an object",
  error: "must be an object with a code and a message",
  "error.code": "must be an integer",
  "error.message": "must be a string"
}

/** A member name from the client, as it may appear in a log line or an answer. */
const quoted = (key: PropertyKey) => JSON.stringify(stripControl(String(key)).slice(0, 40))

/** One line naming the first thing wrong with a message, and whether it is its params (-32602) or the rest. */
const problemOf = (error: ParseResult.ParseError): { readonly code: number; readonly text: string } => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const path = issue?.path ?? []
  // The path holds only our own member names, except for an unexpected member (named quoted, cut short).
  const field = path.join(".")
  const code = path[0] === "params" ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest
  const text = issue?._tag === "Missing"
    ? `${field} is missing`
    : issue?._tag === "Unexpected"
    ? `unexpected member ${quoted(path[path.length - 1] ?? "")}`
    : `${field} ${EXPECTED[field] ?? "is not valid"}`
  return { code, text: `${code === ErrorCode.InvalidParams ? "Invalid params" : "Invalid Request"}: ${text}` }
}

/** Checks a message against one envelope: undefined when it fits, else what is wrong. */
const checker = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })
  return (value: unknown) => Either.match(decode(value), { onLeft: problemOf, onRight: () => undefined })
}
const checkers = {
  request: checker(envelope.request),
  notification: checker(envelope.notification),
  result: checker(envelope.result),
  error: checker(envelope.error)
}

/** A member of a JSON object, without walking anything else. */
const member = (value: object, key: string): unknown => (Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined)

const isId = (value: unknown): value is RequestId => typeof value === "string" || Number.isSafeInteger(value)

/** Why one message (not a batch) is not JSON-RPC the server takes; undefined when it is. */
const checkMessage = (value: unknown): { readonly code: number; readonly text: string } | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { code: ErrorCode.InvalidRequest, text: "Invalid Request: a message must be a JSON object" }
  }
  const check = Object.hasOwn(value, "method")
    ? (Object.hasOwn(value, "id") ? checkers.request : checkers.notification)
    : Object.hasOwn(value, "result")
    ? checkers.result
    : Object.hasOwn(value, "error")
    ? checkers.error
    : undefined
  if (check === undefined) {
    return {
      code: ErrorCode.InvalidRequest,
      text: `Invalid Request: a message needs "method" (a request) or "result"/"error" (a response)`
    }
  }
  return check(value)
}

/** The id an answer to this message may carry: its own for a request, else null (JSON-RPC 2.0, section 5). */
const answerableId = (value: unknown): RequestId | null => {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, "method")) return null
  const id = member(value, "id")
  return isId(id) ? id : null
}

const errorAnswer = (id: RequestId | null, code: number, message: string): JSONRPCErrorResponse => // JSON-RPC 2.0 answers with `id: null` when the request's id cannot be told; the SDK's type has no null.
({ jsonrpc: "2.0", id: id as RequestId, error: { code, message } })

/** What to do with what a client sent: hand the messages to the SDK, or answer and log a refusal. */
export type Incoming =
  | { readonly _tag: "Messages"; readonly messages: ReadonlyArray<JSONRPCMessage> }
  | {
    readonly _tag: "Refused"
    /** The error responses to send (over HTTP, the first is the body). */
    readonly answers: ReadonlyArray<JSONRPCErrorResponse>
    /** One short line for the log: no text of the client's but quoted member names. */
    readonly log: string
  }

const refused = (answers: ReadonlyArray<JSONRPCErrorResponse>, log: string): Incoming => ({ _tag: "Refused", answers, log })

/** One line of the stdio transport: a single message (a batch is not part of MCP since 2025-06-18). */
export const checkLine = (line: string): Incoming => {
  const parsed = Either.try(() => JSON.parse(line) as unknown)
  if (Either.isLeft(parsed)) {
    return refused([errorAnswer(null, ErrorCode.ParseError, "Parse error: a line is not JSON")], "Parse error: a line is not JSON")
  }
  const value = parsed.right
  if (Array.isArray(value)) {
    const text = "Invalid Request: a batch (JSON array) is not taken on stdio; send one message per line"
    // Every request of the batch is answered, so that no client waits for it.
    const ids = value.map(answerableId).filter(isId)
    return refused((ids.length > 0 ? ids : [null]).map((id) => errorAnswer(id, ErrorCode.InvalidRequest, text)), text)
  }
  return checkOne(value)
}

const checkOne = (value: unknown): Incoming => {
  const problem = checkMessage(value)
  if (problem === undefined) return { _tag: "Messages", messages: [value as JSONRPCMessage] }
  // A response from the client is not answered: an error with its id would read as the answer to a request of ours.
  const isResponse = typeof value === "object" && value !== null && !Array.isArray(value) && !Object.hasOwn(value, "method")
  return refused(isResponse ? [] : [errorAnswer(answerableId(value), problem.code, problem.text)], problem.text)
}

/**
 * The body of an HTTP POST (parsed JSON): one message or a batch. A batch with any invalid message, or
 * with two requests of the same id (the second would start the same work again), is refused whole.
 */
export const checkBody = (value: unknown): Incoming => {
  if (!Array.isArray(value)) return checkOne(value)
  if (value.length === 0) {
    return refused([errorAnswer(null, ErrorCode.InvalidRequest, "Invalid Request: an empty batch")], "Invalid Request: an empty batch")
  }
  const seen = new Map<RequestId, number>()
  for (const [index, item] of value.entries()) {
    const problem = checkMessage(item)
    if (problem !== undefined) {
      const text = `${problem.text} (message [${index}] of the batch; the batch was not run)`
      return refused([errorAnswer(null, problem.code, text)], text)
    }
    const id = answerableId(item)
    if (id === null) continue
    const first = seen.get(id)
    if (first !== undefined) {
      const duplicate =
        `Invalid Request: messages [${first}] and [${index}] of the batch are requests with the same id; the batch was not run`
      return refused([errorAnswer(null, ErrorCode.InvalidRequest, duplicate)], duplicate)
    }
    seen.set(id, index)
  }
  return { _tag: "Messages", messages: value as Array<JSONRPCMessage> }
}
