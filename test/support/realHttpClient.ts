import { layerPooledHttpClient } from "../../src/services/httpClientPool.js"

/** The HTTP client exactly as `src/main.ts` builds it. */
export const realHttpClientLayer = layerPooledHttpClient
