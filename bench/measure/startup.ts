/**
 * Start-up from spawn: `serve` to its `initialize` answer (first without the code cache, then with it),
 * `--version` and `ask --help` to exit, beside `node -e 0` on the same machine.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { type BenchContext, repeat } from "../context.js"
import type { Fake } from "../fake.js"
import { cliEnv, spawnCli } from "../spawnCli.js"

export const measureStartup = async (ctx: BenchContext, fake: Fake) => {
  const { figures } = ctx
  const times = ctx.quick ? 3 : 11
  figures["startup.nodeBaselineMs"] = await repeat(times, () =>
    new Promise((resolve, reject) => {
      const started = performance.now()
      const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" })
      child.on("error", reject)
      child.on("exit", () => resolve(performance.now() - started))
    }))
  // The first run after an install has no code cache yet (it makes one in the user's cache directory).
  fs.rmSync(path.join(ctx.tmp, ".cache"), { recursive: true, force: true })
  figures["startup.serveInitColdMs"] = await serveInit(ctx, fake)
  figures["startup.serveInitMs"] = await repeat(times, () => serveInit(ctx, fake))
  figures["startup.versionMs"] = await repeat(times, async () => (await spawnCli(ctx, ["--version"], {})).ms)
  figures["startup.askHelpMs"] = await repeat(times, async () => (await spawnCli(ctx, ["ask", "--help"], {})).ms)
}

/** Spawn `serve`, send `initialize`, time to its answer (the first line on stdout). */
const serveInit = (ctx: BenchContext, fake: Fake): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [ctx.cliEntry, "serve"], {
      env: { PATH: process.env.PATH ?? "", HOME: ctx.tmp, ...cliEnv(fake, path.join(ctx.tmp, "serve-runs")) },
      stdio: ["pipe", "pipe", "ignore"]
    })
    child.on("error", reject)
    child.stdin.write(
      `${
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } }
        })
      }\n`
    )
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (!out.includes("\n")) return
      const ms = performance.now() - started
      const answer: unknown = JSON.parse(out.slice(0, out.indexOf("\n")))
      child.on("exit", () =>
        typeof answer === "object" && answer !== null && "result" in answer
          ? resolve(ms)
          : reject(new Error(`serve answered: ${out}`)))
      child.stdin.end()
    })
    child.on("exit", (code) => {
      if (!out.includes("\n")) reject(new Error(`serve exited ${code} before answering`))
    })
  })
