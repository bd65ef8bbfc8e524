import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { Either, Schema } from "effect"

// The SDK answers a request whose params do not match its schema with -32603 (internal error) and the whole
// validation report as the message. Such a request is the client's mistake: it gets -32602 (invalid params)
// and one line naming each field instead. Applied to every message the server sends, so it covers the
// SDK's own handlers (initialize, tasks/*, logging/setLevel) as well as ours.

const Issues = Schema.parseJson(Schema.NonEmptyArray(Schema.Struct({
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  message: Schema.String
})))
const decodeIssues = Schema.decodeUnknownEither(Issues)

const fieldOf = (path: ReadonlyArray<string | number>) =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${key}`)).join("") || "params"

export const readableErrors = (message: JSONRPCMessage): JSONRPCMessage => {
  if (!("error" in message) || message.error.code !== ErrorCode.InternalError) return message
  const issues = decodeIssues(message.error.message)
  if (Either.isLeft(issues)) return message
  const text = issues.right.map((issue) => `${fieldOf(issue.path)}: ${issue.message}`).join("; ")
  return { ...message, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${text}` } }
}
