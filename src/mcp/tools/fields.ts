import { Schema } from "effect"

// The pieces several tools' input schemas share. The per-call settings (models, deadline, preset, …) come
// from the settings table: `perCallFields` in settings/perCall.ts.

/** How long one call waits for its run; the run goes on either way. */
export const Wait = Schema.Number.pipe(Schema.between(0, 3_600)).annotations({
  description: "Seconds to wait (0: none)."
})

// The tools' descriptions say where a run id comes from.
export const RunId = Schema.String

export const Prompt = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "the prompt is empty"), Schema.minLength(1))

export const Files = Schema.Array(Schema.String.pipe(Schema.minLength(1))).annotations({
  description: "Paths or globs to attach (text, images, PDFs)."
})

/** No arguments at all: an unknown one is refused by name. */
export const NoArguments = Schema.Record({ key: Schema.String, value: Schema.Never })
