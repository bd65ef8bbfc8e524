import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeLiveRuns } from "../../src/mcp/liveRuns.js"
import { makeViewerAccess } from "../../src/mcp/site/viewerAccess.js"
import { viewerRouter } from "../../src/mcp/site/viewerRoutes.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { itLive } from "../support/itLive.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// The viewer's GET /runs/ID serves the page when the run is there, and reads none of the run for it: the page
// asks for the run's view itself (view.json). It used to read the whole view only to learn the run existed.

const tempDir = makeTempDirs("pllm-viewer-page-")
const RUN_ID = "20261126-040000-000-abcdef01"
const PAGE = "<!doctype html><title>run</title><script>void 0</script>"

/** The real run store over `outputDir`, counting the reads of a run's files. */
const countingStore = (outputDir: string, reads: Array<string>) =>
  Layer.effect(
    RunStore,
    Effect.map(RunStore, (store) =>
      RunStore.make({
        ...store,
        readRun: (runId) => Effect.zipRight(Effect.sync(() => reads.push(`readRun ${runId}`)), store.readRun(runId)),
        readRunFile: (runId, file) => Effect.zipRight(Effect.sync(() => reads.push(`${runId}/${file}`)), store.readRunFile(runId, file)),
        readManifest: (runId) => Effect.zipRight(Effect.sync(() => reads.push(`readManifest ${runId}`)), store.readManifest(runId))
      }))
  ).pipe(Layer.provide(RunStore.Default), Layer.provideMerge(Settings.Test(makeTestSettings({ outputDir }))))

/** GET `url` from the viewer's routes, with the bearer token. */
const get = (url: string) =>
  Effect.gen(function*() {
    const runs = yield* makeLiveRuns
    const router = viewerRouter({
      page: PAGE,
      access: makeViewerAccess({ cookieName: "pllm_runs_1", sessionMs: 3_600_000, loginMs: 600_000, maxPending: 3 }),
      bearer: () => "ok",
      runs,
      only: undefined,
      unauthorized: "Unauthorized"
    })
    const request = HttpServerRequest.fromWeb(new Request(`http://127.0.0.1:8080${url}`, { headers: { authorization: "Bearer t" } }))
    const response = yield* Effect.provideService(router, HttpServerRequest.HttpServerRequest, request)
    return HttpServerResponse.toWeb(response)
  })

describe("the viewer's page of a run", () => {
  itLive.scoped("a run that is there: the page, none of the run's files read; one that is not: 404", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      fs.mkdirSync(path.join(outputDir, RUN_ID))
      fs.writeFileSync(path.join(outputDir, RUN_ID, "prompt.md"), "What is 2+2?")
      const reads: Array<string> = []
      const store = countingStore(outputDir, reads)
      const page = yield* get(`/runs/${RUN_ID}`).pipe(Effect.provide(store))
      expect(page.status).toBe(200)
      expect(yield* Effect.promise(() => page.text())).toBe(PAGE)
      expect(reads).toEqual([])
      const missing = yield* get("/runs/20261126-040000-000-abcdef02").pipe(Effect.provide(store))
      expect(missing.status).toBe(404)
    }))

  itLive.scoped("a run directory that is a symlink out of the runs directory is not there", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      const elsewhere = tempDir()
      fs.symlinkSync(elsewhere, path.join(outputDir, RUN_ID))
      const response = yield* get(`/runs/${RUN_ID}`).pipe(Effect.provide(countingStore(outputDir, [])))
      expect(response.status).toBe(404)
    }))
})
