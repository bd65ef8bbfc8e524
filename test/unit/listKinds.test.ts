import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { domainList, originList, pathList } from "../../src/settings/kinds.js"

// The settings that are lists, as their text (an environment variable) reads: comma-separated, each item trimmed,
// empty ones dropped, every item checked.

const read = (kind: typeof pathList, text: string) => Either.map(Schema.decodeEither(kind.text)(text), (items) => [...items])

describe("list settings read from text", () => {
  it("split on commas, trim each item and drop the empty ones", () => {
    expect(read(pathList, " /a , /b,,/c d ,")).toEqual(Either.right(["/a", "/b", "/c d"]))
    expect(read(domainList, "arxiv.org, example.com/docs")).toEqual(Either.right(["arxiv.org", "example.com/docs"]))
  })

  it("drop an origin's trailing slash", () => {
    expect(read(originList, "https://app.example.com/ , http://127.0.0.1:8080")).toEqual(
      Either.right(["https://app.example.com", "http://127.0.0.1:8080"])
    )
  })

  it("refuse an item that is not one, naming it", () => {
    const refused = read(domainList, "arxiv.org, not a domain")
    expect(Either.isLeft(refused) && refused.left.message).toContain(`expected a domain such as example.com, got "not a domain"`)
    const origin = read(originList, "https://app.example.com/path")
    expect(Either.isLeft(origin) && origin.left.message).toContain("expected an origin such as https://app.example.com")
  })
})
