import { Schema } from "effect"

/** The deepest nesting a JSON value from outside (a config file, a run.json, MCP tool arguments) may have. */
export const MAX_JSON_DEPTH = 64

export const tooDeepMessage = `invalid: nested deeper than ${MAX_JSON_DEPTH} levels`

/**
 * Whether `value` nests arrays and objects deeper than `max` levels. Without recursion (an explicit stack), so
 * a value 300,000 levels deep is answered, not a stack overflow; it stops at the first level too deep.
 */
export const isTooDeep = (value: unknown, max: number = MAX_JSON_DEPTH): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next
    if (typeof item !== "object" || item === null) continue
    if (depth >= max) return true
    for (const inner of Array.isArray(item) ? item : Object.values(item)) stack.push([inner, depth + 1])
  }
  return false
}

/**
 * Any value no deeper than `MAX_JSON_DEPTH`: composed before a schema (`Schema.compose(ShallowJson, S, { strict:
 * false })`), it refuses a too deep value before that schema's (recursive) decoding sees it.
 */
export const ShallowJson = Schema.Unknown.pipe(Schema.filter((value) => !isTooDeep(value) || tooDeepMessage))
