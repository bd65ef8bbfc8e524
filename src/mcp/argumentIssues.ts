import type { ParseResult } from "effect"

// An argument a tool refused, said the way its input schema advertises it: the field, what it may be
// (type and range, from the same JSON Schema the client was given) and what it got. Effect's own message
// would quote the field's description as if it were a type ("Expected Default 20., actual -1").

type JsonSchemaNode = Readonly<Record<string, unknown>>

const isNode = (value: unknown): value is JsonSchemaNode => typeof value === "object" && value !== null && !Array.isArray(value)

/** The schema of the field at `path`: through `properties` for names, `items` for indices. */
const nodeAt = (root: JsonSchemaNode, path: ReadonlyArray<PropertyKey>): JsonSchemaNode | undefined => {
  let node: JsonSchemaNode | undefined = root
  for (const key of path) {
    if (node === undefined) return undefined
    const next: unknown = typeof key === "number" ? node.items : isNode(node.properties) ? node.properties[String(key)] : undefined
    node = isNode(next) ? next : undefined
  }
  return node
}

const valueAt = (args: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) => (isNode(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[key] : undefined),
    args
  )

const rangeOf = (node: JsonSchemaNode): string => {
  const { maximum: max, minimum: min } = node
  return typeof min === "number" && typeof max === "number"
    ? ` from ${min} to ${max}`
    : typeof min === "number"
    ? ` of at least ${min}`
    : typeof max === "number"
    ? ` of at most ${max}`
    : ""
}

/** What a value of this schema may be, in words: "a whole number from 1 to 200". */
const expected = (node: JsonSchemaNode): string | undefined => {
  if (Array.isArray(node.enum)) return `one of ${node.enum.map(String).join(", ")}`
  switch (node.type) {
    case "integer":
      return `a whole number${rangeOf(node)}`
    case "number":
      return `a number${rangeOf(node)}`
    case "string":
      return typeof node.minLength === "number" && node.minLength > 0 ? "a non-empty string" : "a string"
    case "boolean":
      return "true or false"
    case "array": {
      const items = isNode(node.items) ? expected(node.items) : undefined
      const list = typeof node.minItems === "number" && node.minItems > 0 ? "a non-empty list" : "a list"
      return items === undefined ? list : `${list}, each ${items}`
    }
    default:
      return undefined
  }
}

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 40 ? `${text.slice(0, 39)}…` : text
}

/**
 * One issue as `field: what it must be, got what`. A filter's own message ("the prompt is empty") is kept:
 * only Effect's generic "Expected …, actual …" is replaced.
 */
export const plainIssue = (
  inputSchema: JsonSchemaNode,
  args: unknown,
  issue: ParseResult.ArrayFormatterIssue,
  field: string
): string => {
  if (issue._tag === "Unexpected") return `${field}: unknown argument`
  if (issue._tag === "Missing") return `${field}: required`
  const node = nodeAt(inputSchema, issue.path)
  const must = node === undefined ? undefined : expected(node)
  if (!issue.message.startsWith("Expected ") || must === undefined) return `${field}: ${issue.message}`
  return `${field}: must be ${must}, got ${shown(valueAt(args, issue.path))}`
}
