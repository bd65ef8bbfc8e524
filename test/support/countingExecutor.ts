import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Effect, Layer } from "effect"

/**
 * The platform's command executor, counting into `counts` how often its layer is built and how many processes are
 * started through it (a start that fails, e.g. with ENOENT, counts: the fork happened).
 */
export const countingExecutor = (counts: { built: number; started: number }) =>
  Layer.effect(
    CommandExecutor.CommandExecutor,
    Effect.map(CommandExecutor.CommandExecutor, (executor) => {
      counts.built += 1
      return CommandExecutor.makeExecutor((command) =>
        Effect.zipRight(Effect.sync(() => void (counts.started += 1)), executor.start(command))
      )
    })
  ).pipe(Layer.provide(NodeCommandExecutor.layer), Layer.provide(NodeFileSystem.layer))
