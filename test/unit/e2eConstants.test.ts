import { describe, expect, it } from "vitest"
import { MAX_JSON_DEPTH } from "../../src/domain/jsonDepth.js"
import { maxJsonDepth } from "../support/e2eConstants.js"

// The e2e tests' copies of src/ constants (test/support/e2eConstants.ts) are the source's.

describe("the e2e tests' copied constants", () => {
  it("MAX_JSON_DEPTH", () => {
    expect(maxJsonDepth).toBe(MAX_JSON_DEPTH)
  })
})
