import { Command, Options } from "@effect/cli"
import { Effect, Either } from "effect"
import { listConfiguredModels } from "../programs/listConfiguredModels.js"
import type { ServicesFor } from "./services.js"
import { settingsFromOptions, settingsOptions } from "./settingsOptions.js"

const price = (usdPerMillion: number | undefined) => (usdPerMillion === undefined ? "-" : `$${usdPerMillion.toFixed(2)}`)

export const makeModelsCommand = (servicesFor: ServicesFor) =>
  Command.make(
    "models",
    {
      json: Options.boolean("json").pipe(Options.withDescription("Print the list as JSON.")),
      ...settingsOptions
    },
    (args) =>
      Effect.gen(function*() {
        const { settings } = yield* settingsFromOptions(args, { requireApiKey: false })
        const listing = yield* listConfiguredModels().pipe(Effect.provide(servicesFor(settings)))
        if (listing.models.some((m) => m.found === false)) process.exitCode = 1
        if (args.json) {
          process.stdout.write(`${JSON.stringify(listing, null, 2)}\n`)
          return
        }
        const rows = listing.models.map((m) => [
          m.role,
          m.id,
          m.found === undefined ? "?" : m.found ? "found" : `NOT FOUND${m.suggestions?.length ? ` (did you mean ${m.suggestions.join(", ")}?)` : ""}`,
          m.contextLength?.toLocaleString("en-US") ?? "-",
          price(m.promptPrice),
          price(m.completionPrice)
        ])
        const header = ["role", "model", "status", "context", "in $/M", "out $/M"]
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
        const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
        process.stdout.write([line(header), ...rows.map(line)].join("\n") + "\n")
        if (Either.isLeft(listing.catalogue)) {
          process.stderr.write(`parallel-llm: could not check against ${settings.baseUrl}/models: ${listing.catalogue.left}\n`)
        }
      })
  ).pipe(
    Command.withDescription(
      "List the configured candidate models and synthesizers, checked against the provider's model list (found or not, context length, prices)."
    )
  )
