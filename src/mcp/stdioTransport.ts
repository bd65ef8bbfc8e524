import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { checkLine, readableErrors } from "./protocolErrors.js"

/**
 * The SDK's stdio transport, with its reading replaced: each line is checked (`checkLine`) before the SDK
 * sees it, so that junk gets a JSON-RPC error answer and one short line in the log (through `onerror`)
 * instead of silence and a Zod report; and every error the server sends names the fields that are wrong.
 */
export class StdioTransport extends StdioServerTransport {
  private pending: Buffer | undefined

  // Replaces the SDK's listener (the one `start` adds and `close` removes) before `start` runs.
  override _ondata = (chunk: Buffer): void => {
    const pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    if (pending.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.pending = undefined
      this.onerror?.(new Error(`a message on stdin is over ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes: closing`))
      this.close().catch(() => undefined)
      return
    }
    let rest = pending
    for (let newline = rest.indexOf(10); newline >= 0; newline = rest.indexOf(10)) {
      const line = rest.toString("utf8", 0, newline).replace(/\r$/, "")
      rest = rest.subarray(newline + 1)
      if (line.trim() !== "") this.receive(line)
    }
    this.pending = rest.length > 0 ? rest : undefined
  }

  private receive(line: string): void {
    const incoming = checkLine(line)
    if (incoming._tag === "Messages") {
      for (const message of incoming.messages) this.onmessage?.(message)
      return
    }
    for (const answer of incoming.answers) this.send(answer).catch(() => undefined)
    this.onerror?.(new Error(incoming.log))
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return super.send(readableErrors(message))
  }

  override close(): Promise<void> {
    this.pending = undefined
    return super.close()
  }
}
