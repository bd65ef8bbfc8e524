import { Schema } from "effect"

// OpenRouter ids look like `vendor/name[:variant]`, or `~vendor/family-latest` for the newest of a family;
// local servers (Ollama) use `name:tag`. Checking the shape before any call turns a typo into a clear
// refusal instead of five paid 400s.
const MODEL_ID = /^~?[A-Za-z0-9][A-Za-z0-9._\-/:@+]{0,199}$/

/** A `~vendor/family-latest` slug: OpenRouter resolves it to the family's newest model at each call. */
export const isLatestSlug = (model: string): boolean => model.startsWith("~")

/** A model id, trimmed and checked for shape. */
export const ModelId = Schema.Trim.pipe(
  Schema.filter((s) =>
    MODEL_ID.test(s) ||
    `${JSON.stringify(s)} is not a model id (expected something like "openai/gpt-5" or "llama3.1:8b")`
  )
)

/** A comma-separated list of model ids, as environment variables and repeated flags give them. */
export const ModelList = Schema.transform(
  Schema.String,
  Schema.Array(ModelId).pipe(Schema.minItems(1, { message: () => "needs at least one model" })),
  {
    strict: true,
    decode: (s) => s.split(",").map((m) => m.trim()).filter((m) => m !== ""),
    encode: (models) => models.join(",")
  }
)

/** Fallback synthesizers: like ModelList, but may be empty (`none`). */
export const FallbackList = Schema.transform(
  Schema.String,
  Schema.Array(ModelId),
  {
    strict: true,
    decode: (s) => (s.trim().toLowerCase() === "none" ? [] : s.split(",").map((m) => m.trim()).filter((m) => m !== "")),
    encode: (models) => (models.length === 0 ? "none" : models.join(","))
  }
)

/** The file-name form of a model id: a leading `~` dropped, then every character outside [A-Za-z0-9._-] becomes `-`. */
export const slugOf = (model: string): string => model.replace(/^~/, "").replace(/[^A-Za-z0-9._-]/g, "-")

/** `responses/NN-<slug>.md`, NN the 1-based position in the configured list. */
export const responseFileName = (index: number, model: string, suffix = ".md"): string =>
  `responses/${String(index + 1).padStart(2, "0")}-${slugOf(model)}${suffix}`
