import type { Manifest } from "../../src/domain/manifest.js"

/**
 * A run's manifest as a test writes one by hand: finished `ok` a second after it began on 2025-01-01, one model and
 * its synthesizer, no candidate and no usage; `fields` replace any of these.
 */
export const manifestOf = (id: string, fields: Partial<Manifest> = {}): Manifest => ({
  id,
  status: "ok",
  createdAt: "2025-01-01T00:00:00.000Z",
  finishedAt: "2025-01-01T00:00:01.000Z",
  durationMs: 1000,
  prompt: { chars: 1, sha256: "00" },
  settings: { models: ["a/one"], synthesizer: "a/synth", concurrency: 5, timeoutMs: 1000, retries: 0 },
  candidates: [],
  usage: { promptTokens: 0, completionTokens: 0 },
  ...fields
})
