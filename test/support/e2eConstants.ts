// Constants of src/ the e2e tests need, copied: an e2e worker loads nothing of the app (it would load the whole of
// it again in each worker). test/unit/e2eConstants.test.ts holds each equal to its source.

/** src/domain/jsonDepth.ts's MAX_JSON_DEPTH: the deepest nesting a JSON value from outside may have. */
export const maxJsonDepth = 64
