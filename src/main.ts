#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import * as fs from "node:fs"
import { runCli } from "./runCli.js"

const version = (): string => {
  const pkg: unknown = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  return typeof pkg === "object" && pkg !== null && "version" in pkg && typeof pkg.version === "string" ? pkg.version : "0.0.0"
}

// A reader that stops early (`ask … | head`) closes the pipe: what is left has nowhere to go, and that is
// no error of ours. Anything else on these streams is.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
  })
}

// A closed terminal or a hung-up session (SIGHUP) ends the work like Ctrl-C or SIGTERM: the runs are
// interrupted and write their manifests, instead of the process dying where it stands.
process.on("SIGHUP", () => process.emit("SIGTERM", "SIGTERM"))

// The process's own command line, environment and streams (ProcessIo's default); an interrupted run exits 130.
NodeRuntime.runMain(runCli({ version: version() }), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) onExit(typeof exit.value === "number" ? exit.value : 0)
    else if (Cause.isInterruptedOnly(exit.cause)) onExit(130)
    else {
      process.stderr.write(`parallel-llm: ${Cause.pretty(exit.cause)}\n`)
      onExit(1)
    }
  }
})
