import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { runCliInProcess as runCli } from "../support/inProcessCli.js"
import { onlyRunDir, readRunJson } from "../support/runOnDisk.js"
import { type CliResult, linesOf, listTree } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// The CLI's command lines, run in-process through the real command tree (runCli), against the loopback fake;
// Ctrl-C, which needs a process, is in test/cli.test.ts. Every test uses its own model names and output
// directory, so the tests can run side by side.

const KEY = "sk-or-v1-CLI-SECRET-9d8c7b6a5f4e3d2c1b0a99887766554433"

const SYNTH_ANSWER = "# The merged answer\n\nBoth candidates agree: **42**."

const provider = withFakeProvider({
  script: {
    "ok/one": {
      kind: "ok",
      content: "Answer one",
      servedBy: "ok/one-2025",
      usage: { prompt_tokens: 5, completion_tokens: 7, cost: 0.001 }
    },
    "ok/two": { kind: "ok", content: "Answer two" },
    "ok/synth": { kind: "ok", content: SYNTH_ANSWER },
    "part/forbidden": { kind: "status", status: 403 },
    "fail/unauth": { kind: "status", status: 401 },
    "fail/down": { kind: "status", status: 500 },
    "int/hang": { kind: "hang" },
    "int/fast": { kind: "ok", content: "fast answer" }
  },
  models: [
    { id: "mod/one", context_length: 100_000, pricing: { prompt: "0.000001", completion: "0.000002" } },
    { id: "mod/synth" }
  ]
})
const { root: tmp, freshDir } = tempRoot("pllm-cli-")
const home = path.join(tmp, "home")

beforeAll(() => {
  fs.mkdirSync(home, { recursive: true })
})

/** A clean environment (nothing inherited but PATH) pointing at the fake. `undefined` removes a variable. */
const envFor = (outputDir: string, extra: Readonly<Record<string, string | undefined>> = {}) =>
  fakeCliEnv(provider.url, { home, outputDir }, {
    OPENROUTER_API_KEY: KEY,
    PARALLEL_LLM_RETRY_BASE_DELAY: "0.01",
    ...extra
  })

/** Runs the CLI and checks what must hold for every run: the key is in neither stdout nor stderr. */
const cli = async (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  stdin?: string | "ignore"
): Promise<CliResult> => {
  const result = await runCli(args, { env, ...(stdin !== undefined ? { stdin } : {}) })
  expect(result.stdout.includes(KEY), "the API key leaked to stdout").toBe(false)
  expect(result.stderr.includes(KEY), "the API key leaked to stderr").toBe(false)
  return result
}

const chatModels = (prefix: string): ReadonlyArray<string> => provider.log().map((r) => r.model ?? "").filter((m) => m.startsWith(prefix))

const userContent = (model: string): unknown => {
  const request = provider.log().find((r) => r.model === model)
  const body = request?.body as { messages?: Array<{ role: string; content: string }> } | undefined
  return body?.messages?.find((m) => m.role === "user")?.content
}

const SUMMARY = /^parallel-llm: (ok|partial|failed|cancelled) · (\d+)\/(\d+) answered · .+ · (\S.*)$/
const STACK_FRAME = /^\s+at\s/m

// One concurrent suite: the tests are independent, and spawning node is most of their time.
describe.concurrent("parallel-llm CLI", () => {
  describe.concurrent("parallel-llm ask", () => {
    it("answers: stdout is exactly the synthesis, logs and a summary on stderr (and in --log-file), every file in the run dir", async () => {
      const out = freshDir("ok")
      const logFile = path.join(freshDir("logs"), "run.log")
      const prompt = "What is the answer to everything?"
      const r = await cli(["ask", prompt, "-m", "ok/one", "-m", "ok/two", "-s", "ok/synth", "--log-file", logFile], envFor(out))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe(`${SYNTH_ANSWER}\n`)

      const errLines = linesOf(r.stderr)
      expect(errLines.some((l) => /\bINFO\b/.test(l) && l.includes("ok/one"))).toBe(true)
      const summary = SUMMARY.exec(errLines[errLines.length - 1] ?? "")
      expect(summary, r.stderr).not.toBeNull()
      expect(summary![1]).toBe("ok")
      expect(`${summary![2]}/${summary![3]}`).toBe("2/2")
      const runDir = onlyRunDir(out)
      expect(summary![4]).toBe(runDir)
      expect(r.stderr).not.toMatch(STACK_FRAME)

      // --log-file gets the same log lines, with full timestamps.
      const logged = linesOf(fs.readFileSync(logFile, "utf8"))
      expect(logged.length).toBeGreaterThanOrEqual(3)
      expect(logged.some((l) => /^\d{4}-\d\d-\d\dT\S+ INFO .*ok\/one/.test(l))).toBe(true)
      expect(logged.join("\n")).not.toContain(KEY)

      // Exactly these files: nothing temporary left behind.
      expect(listTree(runDir)).toEqual(["final.md", "prompt.md", "responses/01-ok-one.md", "responses/02-ok-two.md", "run.json"])
      expect(fs.readFileSync(path.join(runDir, "prompt.md"), "utf8")).toBe(prompt)
      expect(fs.readFileSync(path.join(runDir, "responses/01-ok-one.md"), "utf8")).toBe("Answer one")
      expect(fs.readFileSync(path.join(runDir, "responses/02-ok-two.md"), "utf8")).toBe("Answer two")
      expect(fs.readFileSync(path.join(runDir, "final.md"), "utf8")).toBe(SYNTH_ANSWER)

      const manifest = readRunJson(runDir)
      expect(manifest.id).toBe(path.basename(runDir))
      expect(manifest.status).toBe("ok")
      expect(Number.isNaN(Date.parse(String(manifest["createdAt"])))).toBe(false)
      expect(Number.isNaN(Date.parse(String(manifest["finishedAt"])))).toBe(false)
      expect(typeof manifest["durationMs"]).toBe("number")
      expect(manifest["prompt"]).toEqual({ chars: prompt.length, sha256: crypto.createHash("sha256").update(prompt).digest("hex") })
      expect(manifest["settings"]).toMatchObject({
        models: ["ok/one", "ok/two"],
        synthesizer: "ok/synth",
        concurrency: 5,
        timeoutMs: 240_000,
        retries: 3
      })
      expect(manifest["error"]).toBeUndefined()
      expect(manifest.candidates.map((c) => c.model)).toEqual(["ok/one", "ok/two"])
      const [one, two] = manifest.candidates
      expect(one).toMatchObject({
        model: "ok/one",
        servedBy: "ok/one-2025",
        status: "ok",
        file: "responses/01-ok-one.md",
        attempts: 1,
        usage: { promptTokens: 5, completionTokens: 7, cost: 0.001 }
      })
      expect(typeof one!["latencyMs"]).toBe("number")
      expect(one!["error"]).toBeUndefined()
      expect(two).toMatchObject({ model: "ok/two", servedBy: "ok/two", status: "ok", file: "responses/02-ok-two.md", attempts: 1 })
      expect(manifest.synthesis).toMatchObject({ model: "ok/synth", status: "ok", file: "final.md", attempts: 1 })
      const labels = manifest.synthesis!["labels"] as Array<{ label: string; model: string }>
      expect(labels.map((l) => l.label)).toEqual(["A", "B"])
      expect(labels.map((l) => l.model).sort()).toEqual(["ok/one", "ok/two"])
      expect(manifest["usage"]).toMatchObject({ promptTokens: 5 + 10 + 10, completionTokens: 7 + 20 + 20 })

      // What the provider saw: the prompt for each candidate, both answers for the synthesizer, the key.
      expect(userContent("ok/one")).toBe(prompt)
      expect(userContent("ok/two")).toBe(prompt)
      const synthPrompt = String(userContent("ok/synth"))
      expect(synthPrompt).toContain(prompt)
      expect(synthPrompt).toContain("Answer one")
      expect(synthPrompt).toContain("Answer two")
      for (const request of provider.log().filter((q) => q.model?.startsWith("ok/"))) {
        expect(request.headers["authorization"]).toBe(`Bearer ${KEY}`)
      }
    })

    it("one candidate failing (403): exit 0, status partial; --json prints the manifest with the answer and the run id", async () => {
      const out = freshDir("partial")
      const r = await cli(["ask", "partial?", "--json", "-m", "part/one", "-m", "part/forbidden", "-s", "part/synth"], envFor(out))
      expect(r.code, r.stderr).toBe(0)
      expect(linesOf(r.stderr).at(-1)).toMatch(/^parallel-llm: partial · 1\/2 answered · /)
      const runDir = onlyRunDir(out)
      const manifest = readRunJson(runDir)
      expect(manifest.status).toBe("partial")
      const failed = manifest.candidates[1]!
      expect(failed).toMatchObject({ model: "part/forbidden", status: "error", attempts: 1, error: { tag: "Forbidden", httpStatus: 403 } })
      expect(failed["file"]).toBeUndefined()
      expect(listTree(runDir)).toEqual(["final.md", "prompt.md", "responses/01-part-one.md", "run.json"])
      expect(chatModels("part/forbidden")).toHaveLength(1)

      // stdout is JSON only: the manifest plus the answer.
      const parsed = JSON.parse(r.stdout) as Record<string, unknown> & { candidates: Array<{ model: string; status: string }> }
      expect(parsed["id"]).toBe(path.basename(runDir))
      expect(parsed["status"]).toBe("partial")
      expect(parsed["final"]).toBe("Answer from part/synth")
      expect(parsed.candidates.map((c) => [c.model, c.status])).toEqual([["part/one", "ok"], ["part/forbidden", "error"]])
      expect(parsed).toMatchObject(manifest)
    })

    it("every candidate failing: exit 1, nothing on stdout, no final.md, manifest failed", async () => {
      const out = freshDir("failed")
      const r = await cli(["ask", "doomed", "-m", "fail/unauth", "-m", "fail/down", "-s", "fail/synth", "--retries", "1"], envFor(out))
      expect(r.code, r.stderr).toBe(1)
      expect(r.stdout).toBe("")
      expect(linesOf(r.stderr).at(-1)).toMatch(/^parallel-llm: failed · 0\/2 answered · /)
      expect(r.stderr).not.toMatch(STACK_FRAME)
      const runDir = onlyRunDir(out)
      expect(listTree(runDir)).toEqual(["prompt.md", "run.json"])
      const manifest = readRunJson(runDir)
      expect(manifest.status).toBe("failed")
      expect(manifest.candidates).toMatchObject([
        { model: "fail/unauth", status: "error", attempts: 1, error: { tag: "Unauthorized", httpStatus: 401 } },
        { model: "fail/down", status: "error", attempts: 2, error: { tag: "ProviderFailure", httpStatus: 500 } }
      ])
      expect(manifest.synthesis).toBeUndefined()
      expect(typeof manifest["error"]).toBe("string")
      expect(chatModels("fail/synth")).toHaveLength(0)
    })

    it("prompt from --file; --log-level error (given first) leaves only the summary on stderr", async () => {
      const out = freshDir("file")
      const prompt = "Ünïcödé prompt — from a file\n\nwith `code` and a second paragraph.\n"
      const file = path.join(freshDir("prompt-file"), "prompt.md")
      fs.writeFileSync(file, prompt)
      const r = await cli(["ask", "--log-level", "error", "--file", file, "-m", "file/one", "-s", "file/synth"], envFor(out))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe("Answer from file/synth\n")
      expect(fs.readFileSync(path.join(onlyRunDir(out), "prompt.md"), "utf8")).toBe(prompt)
      expect(userContent("file/one")).toBe(prompt)
      const lines = linesOf(r.stderr)
      expect(lines.filter((l) => /\b(INFO|WARN|DEBUG)\b/.test(l))).toEqual([])
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(SUMMARY)
    })

    // `--log-level` is @effect/cli's built-in flag; it must work wherever the user puts it.
    it("--log-level error as the last flag, after other flags (prompt on stdin)", async () => {
      const out = freshDir("level-last")
      const r = await cli(["ask", "-m", "lvl/one", "-s", "lvl/synth", "--json", "--log-level", "error"], envFor(out), "a prompt on stdin")
      expect(r.code, r.stderr).toBe(0)
      expect((JSON.parse(r.stdout) as { final: unknown }).final).toBe("Answer from lvl/synth")
      expect(fs.readFileSync(path.join(onlyRunDir(out), "prompt.md"), "utf8")).toBe("a prompt on stdin")
      const lines = linesOf(r.stderr)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(SUMMARY)
    })

    it("prompt from stdin; env over config file (PARALLEL_LLM_CONFIG); no key on a loopback base URL (and none sent)", async () => {
      const out = freshDir("stdin")
      const config = path.join(freshDir("stdin-config"), "config.json")
      fs.writeFileSync(config, JSON.stringify({ models: ["nokey/from-file"], synthesizer: "nokey/synth", retries: 1 }))
      const prompt = "A prompt piped in\nover two lines\n"
      const r = await cli(
        ["ask"],
        envFor(out, { OPENROUTER_API_KEY: undefined, PARALLEL_LLM_MODELS: "nokey/one,nokey/two", PARALLEL_LLM_CONFIG: config }),
        prompt
      )
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe("Answer from nokey/synth\n")
      const runDir = onlyRunDir(out)
      expect(fs.readFileSync(path.join(runDir, "prompt.md"), "utf8")).toBe(prompt)
      expect(userContent("nokey/one")).toBe(prompt)
      // Models from the environment beat the file's; the file's synthesizer and retries apply.
      expect(chatModels("nokey/").slice().sort()).toEqual(["nokey/one", "nokey/synth", "nokey/two"])
      expect(readRunJson(runDir)["settings"]).toMatchObject({ models: ["nokey/one", "nokey/two"], synthesizer: "nokey/synth", retries: 1 })
      for (const request of provider.log().filter((q) => q.model?.startsWith("nokey/"))) {
        expect(request.headers["authorization"]).toBeUndefined()
      }
    })

    it("precedence: flag > env > config file", async () => {
      const config = path.join(freshDir("prec-config"), "config.json")
      fs.writeFileSync(config, JSON.stringify({ models: ["prec/file"], synthesizer: "prec/fsynth", retries: 1 }))
      const out = freshDir("prec")
      const r = await cli(["ask", "who wins?", "--config", config, "-m", "prec/flag"], envFor(out, { PARALLEL_LLM_MODELS: "prec/env" }))
      expect(r.code, r.stderr).toBe(0)
      expect(chatModels("prec/").slice().sort()).toEqual(["prec/flag", "prec/fsynth"])
      const manifest = readRunJson(onlyRunDir(out))
      expect(manifest["settings"]).toMatchObject({ models: ["prec/flag"], synthesizer: "prec/fsynth", retries: 1 })
    })
  })

  describe.concurrent("refused before any call: exit 2, one line on stderr, no stack trace", () => {
    /** Every refusal: exit 2, nothing on stdout, one line on stderr naming `names`, no request reached the provider.fake. */
    const refused = async (
      args: ReadonlyArray<string>,
      names: ReadonlyArray<string>,
      extraEnv: Readonly<Record<string, string | undefined>> = {},
      stdin?: string | "ignore"
    ) => {
      const out = freshDir("refused")
      const tag = `refuse-${path.basename(out)}`
      const r = await cli(
        args,
        envFor(out, { PARALLEL_LLM_MODELS: `${tag}/one`, PARALLEL_LLM_SYNTHESIZER: `${tag}/synth`, ...extraEnv }),
        stdin ?? "ignore"
      )
      expect(r.code, r.stderr).toBe(2)
      expect(r.stdout).toBe("")
      const lines = r.stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "")
      expect(lines, r.stderr).toHaveLength(1)
      for (const name of names) expect(lines[0]).toContain(name)
      expect(r.stderr).not.toMatch(STACK_FRAME)
      expect(chatModels(`${tag}/`)).toHaveLength(0)
      expect(fs.readdirSync(out)).toEqual([])
      return lines[0]!
    }

    it("--concurrency abc", async () => {
      await refused(["ask", "hi", "--concurrency", "abc"], ["--concurrency"])
    })

    it("PARALLEL_LLM_TIMEOUT=-1", async () => {
      await refused(["ask", "hi"], ["PARALLEL_LLM_TIMEOUT"], { PARALLEL_LLM_TIMEOUT: "-1" })
    })

    it("an invalid model id", async () => {
      await refused(["ask", "hi", "-m", "bad id"], ["--model", "bad id"])
    })

    it("a config file with an unknown key", async () => {
      const config = path.join(freshDir("bad-config"), "unknown-key.json")
      fs.writeFileSync(config, JSON.stringify({ modelz: ["a/b"] }))
      await refused(["ask", "hi", "--config", config], ["modelz", config])
    })

    it("a config file with a value of the wrong type", async () => {
      const config = path.join(freshDir("bad-config"), "wrong-type.json")
      fs.writeFileSync(config, JSON.stringify({ concurrency: "five" }))
      await refused(["ask", "hi", "--config", config], ["concurrency", config])
    })

    it("missing OPENROUTER_API_KEY with a non-loopback base URL", async () => {
      await refused(["ask", "hi", "--base-url", "https://openrouter.ai/api/v1"], ["OPENROUTER_API_KEY"], { OPENROUTER_API_KEY: undefined })
    })

    it("an unknown flag after the prompt", async () => {
      await refused(["ask", "hi", "--no-such-flag"], ["--no-such-flag"])
    })

    // The contract lists "unknown flag" as a refusal; it must not become the prompt of a paid run.
    it("an unknown flag and no prompt", async () => {
      await refused(["ask", "--no-such-flag"], ["--no-such-flag"])
    })

    it("an empty --model is refused by name, not dropped", async () => {
      await refused(["ask", "hi", "-m", ""], ["--model", "must not be empty"])
    })

    it("a base URL with a password is refused, the password never printed", async () => {
      const line = await refused(["ask", "hi", "--base-url", "http://me:url-secret-pw@127.0.0.1:1/v1"], ["--base-url"])
      expect(line).not.toContain("url-secret-pw")
    })

    it("no prompt at all, stdin empty and not a terminal", async () => {
      await refused(["ask"], ["the prompt is empty"], {}, "ignore")
    })
  })

  describe.concurrent("parallel-llm models, --help", () => {
    it("models --json: a configured id the provider does not list is found: false, exit 1", async () => {
      const r = await cli(["models", "--json", "-m", "mod/one", "-m", "mod/missing", "-s", "mod/synth"], envFor(freshDir("models")))
      const listing = JSON.parse(r.stdout) as { models: Array<{ role: string; id: string; found: boolean | null }> }
      expect(listing.models.map((m) => [m.role, m.id, m.found])).toEqual([
        ["candidate", "mod/one", true],
        ["candidate", "mod/missing", false],
        ["synthesizer", "mod/synth", true]
      ])
      // The same exit status as the table output: a missing model is a failed check.
      expect(r.code, r.stderr).toBe(1)
    })

    it("models --json: every configured id found, exit 0", async () => {
      const r = await cli(["models", "--json", "-m", "mod/one", "-s", "mod/synth"], envFor(freshDir("models")))
      expect(r.code, r.stderr).toBe(0)
      const listing = JSON.parse(r.stdout) as { models: Array<{ id: string; found: boolean; contextLength?: number }> }
      expect(listing.models.every((m) => m.found)).toBe(true)
      expect(listing.models[0]).toMatchObject({ id: "mod/one", contextLength: 100_000 })
    })

    it("--help exits 0 with the usage on stdout, without colours in a pipe", async () => {
      const r = await cli(["--help"], envFor(freshDir("help"), { OPENROUTER_API_KEY: undefined }))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).not.toContain("\x1b[")
      expect(r.stdout).toContain("Usage:")
      expect(r.stdout).toContain("ask")
      expect(r.stdout).toContain("models")
    })

    it("ask --help exits 0 with the usage on stdout", async () => {
      const r = await cli(["ask", "--help"], envFor(freshDir("help"), { OPENROUTER_API_KEY: undefined }))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).not.toContain("\x1b[")
      // Numeric settings say so (and in what), and repeatable ones say so too (test/help.test.ts has the rest).
      expect(r.stdout).toContain("--concurrency <integer>")
      expect(r.stdout).toContain("--timeout <seconds>")
      expect(r.stdout).toContain("-m, --model <model-id>...")
      expect(r.stdout).toContain("Usage:")
      expect(r.stdout).toContain("--model")
      expect(r.stdout).toContain("--file")
      expect(r.stdout).toContain("prompt")
    })
  })

  describe.concurrent("past runs, config, budget, completions", () => {
    it("runs lists a run, runs show prints its summary and answer, resynth makes a new run from it", async () => {
      const out = freshDir("runs")
      const ask = await cli(["ask", "past question", "-m", "ok/one", "-m", "ok/two", "-s", "ok/synth"], envFor(out))
      expect(ask.code, ask.stderr).toBe(0)
      const runId = path.basename(onlyRunDir(out))

      const list = await cli(["runs"], envFor(out))
      expect(list.code, list.stderr).toBe(0)
      const rows = linesOf(list.stdout)
      expect(rows[0]).toMatch(/^id\s+time\s+status\s+answered\s+seconds\s+cost\s+prompt$/)
      expect(rows[1]).toMatch(
        new RegExp(`^${runId}\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\s+ok\\s+2/2\\s+\\d+\\.\\d\\s+\\$0\\.\\d{4}\\s+past question$`)
      )

      const show = await cli(["runs", "show", runId], envFor(out))
      expect(show.code, show.stderr).toBe(0)
      expect(show.stdout).toMatch(
        new RegExp(`^parallel-llm: ok · 2/2 answered · .* · ${path.join(out, runId).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n`)
      )
      expect(show.stdout).toContain("  ok        ok/one")
      expect(show.stdout.trimEnd().endsWith(SYNTH_ANSWER)).toBe(true)

      const before = chatModels("ok/").filter((m) => m === "ok/one").length
      const again = await cli(["resynth", runId, "-s", "ok/synth", "--json"], envFor(out))
      expect(again.code, again.stderr).toBe(0)
      const manifest = JSON.parse(again.stdout) as { id: string; source: string; final: string; status: string }
      expect(manifest).toMatchObject({ source: runId, final: SYNTH_ANSWER, status: "ok" })
      expect(manifest.id).not.toBe(runId)
      expect(chatModels("ok/").filter((m) => m === "ok/one").length).toBe(before)

      const missing = await cli(["runs", "show", "20200101-000000-000-00000000"], envFor(out))
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/no run 20200101-000000-000-00000000/)
    })

    it("config prints every setting with its source, the key redacted", async () => {
      const r = await cli(["config", "--timeout", "99", "-m", "mod/one"], envFor(freshDir("config"), { PARALLEL_LLM_RETRIES: "5" }))
      expect(r.code, r.stderr).toBe(0)
      const line = (name: string) => linesOf(r.stdout).find((l) => l.startsWith(`${name} `)) ?? ""
      expect(line("timeoutMs")).toMatch(/99000\s+flag --timeout$/)
      expect(line("retries")).toMatch(/5\s+env PARALLEL_LLM_RETRIES$/)
      expect(line("models")).toMatch(/mod\/one\s+flag --model$/)
      expect(line("concurrency")).toMatch(/5\s+default$/)
      expect(line("apiKey")).toMatch(/<redacted>\s+env OPENROUTER_API_KEY$/)
    })

    it("config --config /dev/zero is refused at once with one line (a device is not a regular file; none is read)", async () => {
      const r = await cli(["config", "--config", "/dev/zero"], envFor(freshDir("config-zero")), "ignore")
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toBe("parallel-llm: cannot read /dev/zero: not a regular file\n")
    })

    it("--max-cost refuses before any call a run over the budget, and says by how much", async () => {
      const out = freshDir("budget")
      const r = await cli(
        ["ask", "budget question", "-m", "mod/one", "-s", "mod/one", "--max-tokens", "1000", "--max-cost", "0.000001"],
        envFor(out)
      )
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/^parallel-llm: the worst-case cost is \$0\.\d{4}, over the --max-cost budget of \$0\.0000 by \$0\.\d{4}\n$/)
      expect(chatModels("mod/")).toEqual([])
      expect(fs.readdirSync(out)).toEqual([])
    })

    it("--completions prints a shell completion script", async () => {
      const r = await cli(["--completions", "bash"], envFor(freshDir("completions"), { OPENROUTER_API_KEY: undefined }))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("parallel-llm")
      expect(r.stdout).toContain("complete")
    })
  })
})
