import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ProviderFailure } from "../../src/domain/errors.js"
import { collectAttachments } from "../../src/programs/attachments/collect.js"
import { resynthesize } from "../../src/programs/resynthesize.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { thisHost } from "../../src/services/processProbe.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { deadPid } from "../support/deadPid.js"
import type { RecordedRequest } from "../support/fakeOpenRouter.js"
import { sharedHttpClientLayer } from "../support/realHttpClient.js"
import { providerLayer, withFakeProvider } from "../support/withFakeProvider.js"

// Issue 14 part 1, in process against the loopback provider: what each model is sent, what the run keeps.

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3])
const PDF = new TextEncoder().encode("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")

const provider = withFakeProvider({
  default: { kind: "ok", content: "an answer" },
  models: [{ id: "vision/model", input_modalities: ["text", "image"] }, { id: "text/model" }, { id: "test/synth" }]
})
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-attach-"))
const write = (relative: string, data: string | Uint8Array) => {
  const file = path.join(tmp, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, data)
  return file
}

beforeAll(() => {
  // A git work tree: .gitignore files from its top down apply to a directory attached below it.
  fs.mkdirSync(path.join(tmp, "project", ".git"), { recursive: true })
  write("project/.gitignore", "ignored.txt\nbuild/\n")
  write("project/src/a.ts", "export const a = 1\n")
  write("project/src/.gitignore", "secret.ts\n")
  write("project/src/secret.ts", "export const key = 'no'\n")
  write("project/src/deep/b.md", "# B\n")
  write("project/build/out.js", "compiled()\n")
  write("project/ignored.txt", "ignored\n")
  write("project/data.bin", Uint8Array.from([1, 2, 0, 3, 255]))
  write("project/logo.png", PNG)
  write("shot.png", PNG)
  write("disguised.txt", PNG)
  write("paper.pdf", PDF)
  write("notes.md", "Some notes with ``` a fence inside\n")
  write("blob.bin", Uint8Array.from([0, 1, 2, 3]))
  write("big.txt", "x".repeat(2_000))
})
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

const settingsFor = (overrides: Partial<SettingsValue> = {}) =>
  provider.settings({
    models: ["vision/model", "text/model"],
    synthesizer: "test/synth",
    retries: 0,
    outputDir: path.join(tmp, "runs"),
    ...overrides
  })

const layerFor = (settings: SettingsValue, logs: Array<string>) => providerLayer(settings, { logs })

/** Collects the files as `ask --attach` does, from the temp dir, then runs the pipeline. */
const askWith = (prompt: string, specs: ReadonlyArray<string>, overrides: Partial<SettingsValue> = {}) => {
  const logs: Array<string> = []
  return Effect.gen(function*() {
    const attachments = yield* collectAttachments(specs, { base: tmp, what: "--attach" })
    return yield* runPipeline({ prompt, attachments })
  }).pipe(Effect.provide(layerFor(settingsFor(overrides), logs)), Effect.map((result) => ({ ...result, logs })))
}

/** The refusal's message; a run that went ahead is named as such (not its whole result). */
const refusalOf = <R>(run: Effect.Effect<{ readonly runDir: string }, { readonly message: string }, R>) =>
  Effect.map(Effect.either(run), (outcome) => (outcome._tag === "Left" ? outcome.left.message : `not refused: ran ${outcome.right.runDir}`))

type Part = { type: string; text?: string; image_url?: { url: string }; file?: { filename: string; file_data: string } }
const userContentOf = (request: RecordedRequest | undefined): string | ReadonlyArray<Part> => {
  const body = request?.body as { messages: ReadonlyArray<{ role: string; content: string | ReadonlyArray<Part> }> }
  return body.messages.findLast((m) => m.role === "user")!.content
}
const sentTo = (model: string) => userContentOf(provider.log().find((r) => r.model === model))
const textOf = (content: string | ReadonlyArray<Part>) =>
  typeof content === "string" ? content : content.flatMap((p) => (p.type === "text" ? [p.text ?? ""] : [])).join("\n")

describe("attachments (ask --attach, process_prompt files)", () => {
  it.live("sends text as fenced blocks headed by the path, an image only to a model that reads images, a PDF as a file part", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const result = yield* askWith("What is in these?", ["notes.md", "shot.png", "paper.pdf"])
      expect(result.manifest.status).toBe("ok")

      const vision = sentTo("vision/model")
      const blind = sentTo("text/model")
      expect(Array.isArray(vision) && Array.isArray(blind)).toBe(true)
      // Text first, headed by its path, in a fence longer than the one inside it; the prompt last.
      expect(textOf(vision)).toContain("File: notes.md\n````md\nSome notes with ``` a fence inside\n````")
      expect((vision as ReadonlyArray<Part>).at(-1)).toEqual({ type: "text", text: "What is in these?" })
      const images = (c: string | ReadonlyArray<Part>) => (typeof c === "string" ? [] : c.filter((p) => p.type === "image_url"))
      expect(images(vision)).toEqual([{
        type: "image_url",
        image_url: { url: `data:image/png;base64,${Buffer.from(PNG).toString("base64")}` }
      }])
      expect(images(blind)).toEqual([])
      expect(textOf(blind)).toContain("An image, shot.png, is attached to this question, but you cannot see it")
      for (const content of [vision, blind]) {
        expect((content as ReadonlyArray<Part>).filter((p) => p.type === "file")).toEqual([
          { type: "file", file: { filename: "paper.pdf", file_data: `data:application/pdf;base64,${Buffer.from(PDF).toString("base64")}` } }
        ])
      }

      // The synthesizer sees the question as asked: the text, and the image and PDF by name.
      const synth = textOf(sentTo("test/synth"))
      expect(synth).toContain("File: notes.md")
      expect(synth).toContain("An image, shot.png, is attached to this question; it is not shown to you.")
      expect(synth).toContain("A PDF, paper.pdf, is attached")

      // Copies in attachments/ (owner only), and the manifest says who got what.
      const dir = path.join(result.runDir, "attachments")
      expect(fs.readdirSync(dir).sort()).toEqual(["01-notes.md", "02-shot.png", "03-paper.pdf"])
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(dir, "02-shot.png")).mode & 0o777).toBe(0o600)
      expect(Buffer.compare(fs.readFileSync(path.join(dir, "02-shot.png")), Buffer.from(PNG))).toBe(0)
      const onDisk = JSON.parse(fs.readFileSync(path.join(result.runDir, "run.json"), "utf8")) as typeof result.manifest
      expect(onDisk.attachments).toEqual([
        expect.objectContaining({
          path: "notes.md",
          file: "attachments/01-notes.md",
          mediaType: "text/plain",
          sentAs: { "vision/model": "text", "text/model": "text" }
        }),
        {
          path: "shot.png",
          file: "attachments/02-shot.png",
          bytes: PNG.length,
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
          mediaType: "image/png",
          sentAs: { "vision/model": "image", "text/model": "note" }
        },
        expect.objectContaining({
          path: "paper.pdf",
          mediaType: "application/pdf",
          sentAs: { "vision/model": "file", "text/model": "file" }
        })
      ])
    }))

  it.live("takes a directory's text files, honouring .gitignore from the work tree's top down, and names the binaries it skips", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const result = yield* askWith("Review this.", ["project"])
      expect(result.manifest.attachments?.map((a) => a.path)).toEqual([
        path.join("project", ".gitignore"),
        path.join("project", "src", ".gitignore"),
        path.join("project", "src", "a.ts"),
        path.join("project", "src", "deep", "b.md")
      ])
      const sent = sentTo("text/model")
      expect(typeof sent).toBe("string")
      expect(sent).toContain(`File: ${path.join("project", "src", "a.ts")}\n\`\`\`ts\nexport const a = 1\n\`\`\``)
      expect(sent).not.toContain("export const key")
      expect(sent).not.toContain("compiled()")
      expect(result.logs).toContain(`${path.join("project", "data.bin")}: skipped, a binary file`)
      expect(result.logs).toContain(`${path.join("project", "logo.png")}: skipped, not a text file`)
    }))

  it.live("decides the media type from the content, and takes a glob", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const result = yield* askWith("What?", ["disguised.txt", "*.md"])
      expect(result.manifest.attachments?.map((a) => [a.path, a.mediaType])).toEqual([
        ["disguised.txt", "image/png"],
        ["notes.md", "text/plain"]
      ])
    }))

  it.live("refuses the whole run, naming the file, over a cap or for a binary file; nothing is sent", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const refusal = (specs: ReadonlyArray<string>, overrides: Partial<SettingsValue> = {}) => refusalOf(askWith("q", specs, overrides))
      expect(yield* refusal(["big.txt"], { attachMaxBytes: 1_000 })).toBe(
        "--attach: big.txt has 2,000 bytes, more than the 1,000 bytes allowed per file (--attach-max-bytes)"
      )
      expect(yield* refusal(["notes.md", "big.txt"], { attachMaxTotalBytes: 2_010 })).toMatch(
        /^--attach: with big\.txt the attachments add up to 2,035 bytes, more than the 2,010 bytes allowed in one run \(--attach-max-total-bytes\)$/
      )
      // Attached text is sent with the prompt: --max-prompt-chars counts it (issue 23, finding 3).
      expect(yield* refusal(["big.txt"], { maxPromptChars: 1_000 })).toBe(
        "the prompt has 2,001 characters with its attached text (2,000), more than the 1,000 allowed (--max-prompt-chars)"
      )
      expect(yield* refusal(["blob.bin"])).toMatch(/^--attach: blob\.bin is a binary file/)
      expect(yield* refusal(["missing.txt"])).toBe("--attach: cannot read missing.txt: no such file or directory")
      expect(yield* refusal(["*.nothing"])).toBe("--attach: no file matches *.nothing")
      expect(provider.fake.requests).toHaveLength(0)
    }))

  it.live("counts attached text in the worst-case cost of --max-cost", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const budget = { maxCost: Option.some(0.0012), maxTokens: Option.some(10) }
      const refused = yield* refusalOf(askWith("q", ["big.txt"], budget))
      expect(refused).toMatch(/^the worst-case cost is \$0\.\d+, over the --max-cost budget/)
      expect(provider.log()).toHaveLength(0)
      expect((yield* askWith("q", [], budget)).manifest.status).toBe("ok")
    }))

  it.live("with the provider's model list unreadable, sends no image, and says so in the log and the manifest", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const logs: Array<string> = []
      // The real client, whose /models fails as an unreachable catalogue would.
      const blindClient = Layer.effect(
        ModelClient,
        Effect.map(ModelClient, (real) =>
          ModelClient.make({
            stream: real.stream,
            listModels: () => Effect.fail(new ProviderFailure({ model: "(models)", message: "HTTP 503", httpStatus: 503 })),
            catalogue: Effect.fail(new ProviderFailure({ model: "(models)", message: "HTTP 503", httpStatus: 503 })),
            catalogueNewerThan: () => Effect.fail(new ProviderFailure({ model: "(models)", message: "HTTP 503", httpStatus: 503 })),
            keptCatalogue: Effect.succeed(Option.none())
          }))
      ).pipe(Layer.provide(ModelClient.Default))
      const layer = Layer.mergeAll(blindClient, RunStore.DefaultWithoutDependencies).pipe(
        Layer.provideMerge(Settings.Test(settingsFor())),
        Layer.provideMerge(Layer.mergeAll(sharedHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
        Layer.merge(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push([message].flat().join(" ")))))
      )
      const result = yield* Effect.gen(function*() {
        const attachments = yield* collectAttachments(["shot.png"], { base: tmp, what: "--attach" })
        return yield* runPipeline({ prompt: "q", attachments })
      }).pipe(Effect.provide(layer))
      for (const model of ["vision/model", "text/model"]) expect(textOf(sentTo(model))).toContain("you cannot see it")
      expect(result.manifest.attachments?.[0]).toMatchObject({
        sentAs: { "vision/model": "note", "text/model": "note" },
        note: expect.stringContaining("the provider's model list could not be read")
      })
      expect(logs.some((l) => l.startsWith("cannot read the provider's model list (HTTP 503)"))).toBe(true)
    }))

  it.live("resynth sends the synthesizer the same attachments, and the new run keeps them", () =>
    Effect.gen(function*() {
      provider.fake.reset()
      const first = yield* askWith("Explain.", ["notes.md", "shot.png"])
      provider.fake.reset()
      const again = yield* resynthesize({ runId: first.manifest.id }).pipe(Effect.provide(layerFor(settingsFor(), [])))
      expect(provider.log().map((r) => r.model)).toEqual(["test/synth"])
      expect(textOf(sentTo("test/synth"))).toContain("File: notes.md\n````md\nSome notes")
      expect(fs.readdirSync(path.join(again.runDir, "attachments")).sort()).toEqual(["01-notes.md", "02-shot.png"])
      expect(again.manifest.attachments).toEqual(first.manifest.attachments)
    }))

  it.live("an interrupted run keeps its attachments in its owner record, so resynth still has them", () =>
    Effect.gen(function*() {
      const first = yield* askWith("Explain.", ["notes.md"])
      // As if its process died before the manifest: the owner record as createRun wrote it, a dead pid.
      fs.rmSync(path.join(first.runDir, "run.json"))
      fs.writeFileSync(
        path.join(first.runDir, "owner.json"),
        JSON.stringify({
          pid: deadPid(),
          host: thisHost(),
          processStartedAt: new Date(0).toISOString(),
          createdAt: first.manifest.createdAt,
          settings: first.manifest.settings,
          attachments: first.manifest.attachments
        })
      )
      provider.fake.reset()
      const again = yield* resynthesize({ runId: first.manifest.id }).pipe(Effect.provide(layerFor(settingsFor(), [])))
      expect(again.manifest.attachments?.map((a) => a.path)).toEqual(["notes.md"])
      expect(textOf(sentTo("test/synth"))).toContain("File: notes.md")
    }))

  it.live("records the attachments in the owner record while the run is live", () =>
    Effect.gen(function*() {
      const records = [{
        path: "x.txt",
        file: "attachments/01-x.txt",
        bytes: 1,
        sha256: "0".repeat(64),
        mediaType: "text/plain",
        sentAs: {}
      }]
      const run = yield* RunStore.pipe(Effect.flatMap((store) => store.createRun(undefined, records)))
      expect(JSON.parse(fs.readFileSync(path.join(run.dir, "owner.json"), "utf8")).attachments).toEqual(records)
    }).pipe(Effect.provide(layerFor(settingsFor(), []))))
})
