import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collectAttachments } from "../../src/programs/attachments/collect.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { continueRun } from "../../src/programs/thread/continueRun.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// A follow-up of a run with attachments: its earlier turn is sent as it was asked (the text file in the
// prompt, the image only to the model that reads images), and the new turn may attach files of its own.

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3])

const provider = withFakeProvider({
  script: { "t/synth": [{ kind: "ok", content: "FIRST FINAL" }, { kind: "ok", content: "SECOND FINAL" }] },
  models: [{ id: "vision/model", input_modalities: ["text", "image"] }, { id: "text/model" }, { id: "t/synth" }]
})
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-followup-attach-"))

beforeAll(() => {
  fs.writeFileSync(path.join(tmp, "notes.md"), "the notes\n")
  fs.writeFileSync(path.join(tmp, "shot.png"), PNG)
  fs.writeFileSync(path.join(tmp, "extra.md"), "more notes\n")
})
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

const layerFor = () =>
  provider.layer({ models: ["vision/model", "text/model"], synthesizer: "t/synth", retries: 0, outputDir: path.join(tmp, "runs") })

type Part = { readonly type: string; readonly text?: string; readonly image_url?: { readonly url: string } }
interface Sent {
  readonly role: string
  readonly content: string | ReadonlyArray<Part>
}

describe("a follow-up of a run with attachments", () => {
  it.live("sends the earlier turn with its attachments as it was asked, and the new turn's own", () =>
    Effect.gen(function*() {
      const attach = (files: ReadonlyArray<string>) => collectAttachments(files, { base: tmp, what: "--attach" })
      const first = yield* runPipeline({ prompt: "What do these show?", attachments: yield* attach(["notes.md", "shot.png"]) })
      const since = provider.log().length
      const second = yield* continueRun(first.manifest.id, { prompt: "And this one?", attachments: yield* attach(["extra.md"]) })
      const sentTo = (model: string) =>
        (provider.log().slice(since).find((r) => r.model === model)!.body as { messages: ReadonlyArray<Sent> }).messages

      const vision = sentTo("vision/model")
      expect(vision.map((m) => m.role)).toEqual(["user", "assistant", "user"])
      const asked = vision[0]!.content as ReadonlyArray<Part>
      expect(asked[0]).toEqual({ type: "text", text: "File: notes.md\n```md\nthe notes\n```\n\n" })
      expect(asked[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.from(PNG).toString("base64")}` } })
      expect(asked[2]).toEqual({ type: "text", text: "What do these show?" })
      expect(vision[1]).toEqual({ role: "assistant", content: "FIRST FINAL" })
      expect(vision[2]).toEqual({ role: "user", content: "File: extra.md\n```md\nmore notes\n```\n\nAnd this one?" })

      // The model without image input gets the note in place of the earlier turn's image.
      const blind = sentTo("text/model")
      expect(blind[0]!.content).toContain("(An image, shot.png, is attached to this question, but you cannot see it")
      expect(JSON.stringify(blind)).not.toContain("image_url")

      const synth = (sentTo("t/synth").find((m) => m.role === "user")!.content) as string
      expect(synth).toContain("<user>\n(attached: notes.md, shot.png)\nWhat do these show?\n</user>")

      expect(second.manifest.parent).toBe(first.manifest.id)
      expect(second.manifest.attachments?.map((a) => a.path)).toEqual(["extra.md"])
    }).pipe(Effect.provide(layerFor())))
})
