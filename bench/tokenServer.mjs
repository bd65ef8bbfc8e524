// A loopback OpenAI-compatible server for the bench, in its own process so that its work never counts
// against the client being measured. Every chat request is answered as a token stream: after
// `--delay` ms, `--events` SSE chunks of one word each, one per socket write, `--interval` ms apart
// (0: as fast as the socket takes them), then the finish chunk, usage and [DONE]. Non-streamed
// requests get the same words as one JSON body. Prints its base URL on stdout, then serves until killed.
import * as http from "node:http"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "20" },
    interval: { type: "string", default: "0" },
    delay: { type: "string", default: "50" }
  }
})
const events = Number(values.events)
const interval = Number(values.interval)
const delay = Number(values.delay)

let served = 0
let open = 0
let mostOpen = 0
const chunk = (model, delta, finish) =>
  `data: ${
    JSON.stringify({
      id: "gen-bench",
      object: "chat.completion.chunk",
      created: 1,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }]
    })
  }\n\n`

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(404, { "content-type": "application/json" }).end(`{"error":{"code":404,"message":"not found"}}`)
    return
  }
  let body = ""
  req.setEncoding("utf8").on("data", (piece) => (body += piece)).on("end", () => {
    const request = JSON.parse(body)
    const model = request.model
    served++
    mostOpen = Math.max(mostOpen, ++open)
    res.once("close", () => open--)
    setTimeout(() => {
      if (!request.stream) {
        const content = Array.from({ length: events }, (_, i) => `word${i}`).join(" ")
        res.writeHead(200, { "content-type": "application/json" })
        res.end(
          JSON.stringify({
            id: "gen-bench",
            model,
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: events, cost: 0.0001 }
          })
        )
        return
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      let sent = 0
      const next = () => {
        if (res.destroyed) return
        if (sent < events) {
          res.write(chunk(model, { role: "assistant", content: `${sent === 0 ? "" : " "}word${sent}` }, null))
          sent++
          if (interval > 0) setTimeout(next, interval)
          else setImmediate(next)
          return
        }
        res.write(chunk(model, {}, "stop"))
        res.write(
          `data: ${
            JSON.stringify({ id: "gen-bench", model, choices: [], usage: { prompt_tokens: 10, completion_tokens: events, cost: 0.0001 } })
          }\n\n`
        )
        res.end("data: [DONE]\n\n")
      }
      next()
    }, delay)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/api/v1\n`)
})
process.on("SIGTERM", () => {
  process.stderr.write(`tokenServer: ${served} requests, at most ${mostOpen} open at once\n`)
  process.exit(0)
})
