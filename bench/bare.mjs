// The floor's two primitives, in bare Node: a streamed chat call (global fetch, the SSE split by hand) and an atomic
// write (a temporary file, then a rename). bench/floor.mjs runs a batch with them; bench/perPrompt.mjs one prompt.
import * as fs from "node:fs/promises"

/** One streamed chat completion from the OpenAI-compatible server at `url`: its text and its usage. */
export const bareComplete = async (url, model, content) => {
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }], stream: true })
  })
  const decoder = new TextDecoder()
  let buffer = ""
  let text = ""
  let usage
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true })
    let end
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const event = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      if (!event.startsWith("data: ") || event === "data: [DONE]") continue
      const chunk = JSON.parse(event.slice(6))
      text += chunk.choices?.[0]?.delta?.content ?? ""
      if (chunk.usage) usage = chunk.usage
    }
  }
  return { model, text, usage }
}

/** Writes `text` to `file` as the run store does: a temporary sibling, then a rename. */
export const writeAtomic = async (file, text) => {
  const temp = `${file}.${process.pid}.tmp`
  await fs.writeFile(temp, text, { mode: 0o600 })
  await fs.rename(temp, file)
}
