import { Effect, Option } from "effect"
import { UsageError } from "../domain/errors.js"
import { serveMcp } from "../mcp/server.js"
import type { ParsedArgs } from "./flags.js"
import { succeeded } from "./outcome.js"
import { SERVE_DEFAULT_HOST, SERVE_DEFAULT_PORT, type serveCli } from "./serveCli.js"

/** `serve`: until the client goes away (stdio) or the process is told to stop (HTTP). */
export const serve = Effect.fn("serve")(function*(args: ParsedArgs<typeof serveCli>) {
  if (!args.http) {
    if (Option.isSome(args.host) || Option.isSome(args.port)) return yield* new UsageError({ message: "--host and --port go with --http" })
    yield* serveMcp()
    return succeeded
  }
  const port = Option.getOrElse(args.port, () => SERVE_DEFAULT_PORT)
  if (port < 0 || port > 65_535) return yield* new UsageError({ message: `--port must be a whole number from 0 to 65535, got ${port}` })
  // The HTTP server and the viewer's routes are imported only here: `serve` on stdio starts without them.
  const { serveMcpHttp } = yield* Effect.promise(() => import("../mcp/http.js"))
  yield* serveMcpHttp({ host: Option.getOrElse(args.host, () => SERVE_DEFAULT_HOST), port })
  return succeeded
})
