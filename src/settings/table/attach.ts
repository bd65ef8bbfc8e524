import { integerIn, pathList } from "../kinds.js"
import { absolutePath, type Topic, withDefault } from "../setting.js"

/** Files attached to a prompt (`ask --attach`, `process_prompt` `files`): size caps, and where MCP may read. */
export const attachTopic: Topic = { title: "Attachment", commands: ["ask", "serve"] }

export const attachSettings = {
  attachMaxBytes: withDefault({
    field: "attachMaxBytes",
    kind: integerIn(1, 1_073_741_824),
    flag: "attach-max-bytes",
    env: "PARALLEL_LLM_ATTACH_MAX_BYTES",
    doc: "Largest attached file in bytes; a larger one is refused",
    default: 10 * 1024 * 1024,
    defaultDoc: "10485760 (10 MiB)"
  }),
  attachMaxTotalBytes: withDefault({
    field: "attachMaxTotalBytes",
    kind: integerIn(1, 4_294_967_296),
    flag: "attach-max-total-bytes",
    env: "PARALLEL_LLM_ATTACH_MAX_TOTAL_BYTES",
    doc: "Largest total of a run's attachments in bytes",
    default: 30 * 1024 * 1024,
    defaultDoc: "31457280 (30 MiB)"
  }),
  attachMaxFiles: withDefault({
    field: "attachMaxFiles",
    kind: integerIn(1, 10_000),
    flag: "attach-max-files",
    env: "PARALLEL_LLM_ATTACH_MAX_FILES",
    doc: "Most files one run may attach (each file of a directory or glob)",
    default: 1_000,
    defaultDoc: "1000"
  }),
  allowDirs: withDefault({
    field: "allowDirs",
    kind: pathList,
    flag: "allow-dir",
    commands: ["serve"],
    env: "PARALLEL_LLM_ALLOW_DIRS",
    doc: "`serve`: directories MCP `files` may be read from besides the client's roots; a client without roots may read only these",
    default: [],
    defaultDoc: "none",
    convert: (dirs, ctx) => dirs.map((dir) => absolutePath(dir, ctx))
  })
}
