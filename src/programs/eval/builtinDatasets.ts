import type { ScorerName } from "./scorers.js"

// Apart from the dataset reader: `eval --help` names them without loading it (the CLI's start-up).

export type DatasetFormat = "eval" | "gsm8k"

/** Built-in datasets, shipped in the package's `data/` with their licences. */
export const builtinDatasets: Readonly<
  Record<string, { readonly file: URL; readonly format: DatasetFormat; readonly scorer: ScorerName }>
> = {
  gsm8k: { file: new URL("../../../data/gsm8k-frozen-candidates.jsonl", import.meta.url), format: "gsm8k", scorer: "numeric" }
}
