import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { makeRunReader } from "../../services/runReader.js"

// An eval reads back the runs it made: their manifests, answers and final answers. Results files and manifests
// are files from outside (they may be edited, or copied from elsewhere), so a run directory and the file names a
// manifest gives are read through the run store's reader, which takes only a run id and the run layout's names
// and opens each file once, in place: a `record.file` of `../../x` or a symlinked answer is no answer.

/** The run store's reader over the directory that holds `runDir`, and the run's id (its directory's name). */
const readerAt = (runDir: string) =>
  Effect.map(Effect.all([FileSystem.FileSystem, Path.Path]), ([fs, path]) => ({
    reader: makeRunReader(fs, path, path.dirname(runDir)),
    runId: path.basename(runDir)
  }))

/** A file of the run in `runDir`, or None: missing, unreadable, or not a file of the run layout in its place. */
export const readRunFileAt = (runDir: string, file: string) =>
  Effect.flatMap(readerAt(runDir), ({ reader, runId }) => Effect.option(reader.readRunFile(runId, file)))

/** The manifest of the run in `runDir` (decoded as the run store decodes it), or None. */
export const readManifestAt = (runDir: string) =>
  Effect.flatMap(readerAt(runDir), ({ reader, runId }) => Effect.option(reader.readManifest(runId)))
