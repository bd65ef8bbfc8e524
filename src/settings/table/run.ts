import { integerIn, numberIn, pathList, reasoningEffort, switchOff, switchOn } from "../kinds.js"
import { type CommandName, optional, perCall, secondsToMs, type Topic, withDefault } from "../setting.js"

/** How each run calls the models: concurrency, timeouts, retries, sampling, deadlines and quorum, limits, budget. */
export const runTopic: Topic = { title: "Run", commands: ["ask", "batch", "serve", "resynth", "eval"] }

/** What only asking the candidates uses: a re-synthesis asks none. */
const askingCandidates: ReadonlyArray<CommandName> = ["ask", "batch", "serve", "eval"]

export const runSettings = {
  concurrency: withDefault({
    field: "concurrency",
    kind: integerIn(1, 2048),
    flag: "concurrency",
    env: "PARALLEL_LLM_CONCURRENCY",
    doc: "HTTP calls in flight: for one run; in `batch`, for the whole process",
    default: 5,
    defaultDoc: "5 (`batch`: 16)"
  }),
  timeout: withDefault({
    field: "timeoutMs",
    kind: numberIn(0.001, 86_400),
    flag: "timeout",
    env: "PARALLEL_LLM_TIMEOUT",
    doc: "Per-model timeout in seconds, retries included",
    default: 240,
    defaultDoc: "240",
    convert: secondsToMs
  }),
  retries: withDefault({
    field: "retries",
    kind: integerIn(0, 20),
    flag: "retries",
    env: "PARALLEL_LLM_RETRIES",
    doc: "Retries of transient failures",
    default: 3,
    defaultDoc: "3"
  }),
  retryBaseDelay: withDefault({
    field: "retryBaseDelayMs",
    kind: numberIn(0, 600),
    flag: "retry-base-delay",
    env: "PARALLEL_LLM_RETRY_BASE_DELAY",
    doc: "Seconds before a first retry (doubled, jittered, ≤ 30 s, ≥ Retry-After)",
    default: 1,
    defaultDoc: "1",
    convert: secondsToMs
  }),
  temperature: withDefault({
    field: "temperature",
    kind: numberIn(0, 2),
    flag: "temperature",
    env: "PARALLEL_LLM_TEMPERATURE",
    doc: "Temperature (0 to 2)",
    default: 0.7,
    defaultDoc: "0.7"
  }),
  maxTokens: optional({
    field: "maxTokens",
    kind: integerIn(1, 10_000_000),
    flag: "max-tokens",
    env: "PARALLEL_LLM_MAX_TOKENS",
    doc: "Max output tokens per call",
    defaultDoc: "unset (the provider's default)"
  }),
  reasoning: optional({
    field: "reasoning",
    preset: true,
    kind: reasoningEffort,
    flag: "reasoning",
    env: "PARALLEL_LLM_REASONING",
    doc: "Reasoning effort for every model of a run, over each model's own `reasoning` in the config file",
    defaultDoc: "unset (each model's own, else the provider's default)"
  }),
  web: perCall(
    withDefault({
      field: "web",
      preset: true,
      kind: switchOn,
      flag: "web",
      commands: askingCandidates,
      env: "PARALLEL_LLM_WEB",
      doc: "Web search for every candidate (OpenRouter's web search tool); cited pages go to the manifest and synthesizer",
      default: false,
      defaultDoc: "off"
    }),
    { description: "Candidates search the web." }
  ),
  synthesisMaxChars: withDefault({
    field: "synthesisMaxChars",
    kind: integerIn(1_000, 100_000_000),
    flag: "synthesis-max-chars",
    env: "PARALLEL_LLM_SYNTHESIS_MAX_CHARS",
    doc: "Characters of candidate text the synthesizer gets at most (longer answers are cut with a marker)",
    default: 400_000,
    defaultDoc: "400000"
  }),
  contextMaxChars: withDefault({
    field: "contextMaxChars",
    kind: integerIn(0, 100_000_000),
    flag: "context-max-chars",
    // Follow-ups: `ask --continue`, `continue_run`, and a re-synthesis of a follow-up.
    commands: ["ask", "serve", "resynth"],
    env: "PARALLEL_LLM_CONTEXT_MAX_CHARS",
    doc: "Characters of earlier turns a follow-up (`ask --continue`) carries at most; the oldest are left out first",
    default: 200_000,
    defaultDoc: "200000"
  }),
  followUpMaxTurns: withDefault({
    field: "followUpMaxTurns",
    kind: integerIn(1, 10_000),
    flag: "follow-up-max-turns",
    env: "PARALLEL_LLM_FOLLOW_UP_MAX_TURNS",
    doc: "Turns a thread may hold; a longer one is refused",
    default: 50,
    defaultDoc: "50"
  }),
  deadline: perCall(
    optional({
      field: "deadlineMs",
      preset: true,
      kind: numberIn(0.001, 86_400),
      flag: "deadline",
      env: "PARALLEL_LLM_DEADLINE",
      doc: "Whole-run deadline in seconds; stragglers are cut so that the synthesis still fits",
      defaultDoc: "none",
      convert: secondsToMs
    }),
    {
      description: "Time limit in seconds; slow models are cut."
    }
  ),
  synthesisReserve: optional({
    field: "synthesisReserveMs",
    kind: numberIn(0, 86_400),
    flag: "synthesis-reserve",
    commands: askingCandidates,
    env: "PARALLEL_LLM_SYNTHESIS_RESERVE",
    doc: "With a deadline: seconds kept for the synthesis",
    defaultDoc: "40 % of the deadline",
    convert: secondsToMs
  }),
  quorum: perCall(
    optional({
      field: "quorum",
      preset: true,
      kind: integerIn(1, 1000),
      flag: "quorum",
      commands: askingCandidates,
      env: "PARALLEL_LLM_QUORUM",
      doc: "Answers after which to stop waiting (after the grace)",
      defaultDoc: "all candidates"
    }),
    {
      description: "Stop once this many answered (after grace).",
      max: 16
    }
  ),
  grace: perCall(
    withDefault({
      field: "graceMs",
      preset: true,
      kind: numberIn(0, 86_400),
      flag: "grace",
      commands: askingCandidates,
      env: "PARALLEL_LLM_GRACE",
      doc: "Seconds to wait for the others once the quorum answered",
      default: 0,
      defaultDoc: "0",
      convert: secondsToMs
    }),
    {
      description: "Seconds more for the rest after quorum."
    }
  ),
  maxResponseBytes: withDefault({
    field: "maxResponseBytes",
    kind: integerIn(1_024, 1_073_741_824),
    flag: "max-response-bytes",
    env: "PARALLEL_LLM_MAX_RESPONSE_BYTES",
    doc: "Largest accepted response in bytes; a larger one is cut off",
    default: 4 * 1024 * 1024,
    defaultDoc: "4194304 (4 MiB)"
  }),
  maxPromptChars: withDefault({
    field: "maxPromptChars",
    kind: integerIn(1, 100_000_000),
    flag: "max-prompt-chars",
    env: "PARALLEL_LLM_MAX_PROMPT_CHARS",
    doc: "Largest accepted prompt in characters",
    default: 2_000_000,
    defaultDoc: "2000000"
  }),
  stream: withDefault({
    field: "stream",
    kind: switchOff,
    flag: "no-stream",
    env: "PARALLEL_LLM_STREAM",
    doc: "Stream answers (SSE); `--no-stream` asks for whole answers, for servers without SSE",
    default: true,
    defaultDoc: "on"
  }),
  checkModels: withDefault({
    field: "checkModels",
    kind: switchOn,
    flag: "check-models",
    env: "PARALLEL_LLM_CHECK_MODELS",
    doc: "Check every model id against the provider's model list (`GET /models`) before any paid call",
    default: false,
    defaultDoc: "off"
  }),
  maxModels: withDefault({
    field: "maxModels",
    kind: integerIn(1, 1000),
    flag: "max-models",
    env: "PARALLEL_LLM_MAX_MODELS",
    doc: "Most candidate models in one run; a run with more is refused before any call",
    default: 16,
    defaultDoc: "16"
  }),
  maxInFlight: withDefault({
    field: "maxInFlight",
    kind: integerIn(1, 4096),
    flag: "max-in-flight",
    // Only `serve` runs several runs side by side; in `batch` and `eval`, `--concurrency` is the process's bound.
    commands: ["serve"],
    env: "PARALLEL_LLM_MAX_IN_FLIGHT",
    doc: "Upstream calls in flight for the whole process, every run together (`serve`; in `batch`, its `--concurrency` is this bound)",
    default: 16,
    defaultDoc: "16"
  }),
  cache: withDefault({
    field: "cacheTtl",
    kind: integerIn(0, 86_400),
    flag: "cache",
    bare: "300",
    // Reruns over the same calls (`eval`, `resynth`, a batch, a server's repeated questions) gain the most.
    commands: ["batch", "serve", "resynth", "eval"],
    namedIn: ["ask"],
    env: "PARALLEL_LLM_CACHE",
    doc: "OpenRouter's response cache: seconds an identical call is answered again, free (0: off; `--cache` alone: 300)",
    default: 0,
    defaultDoc: "0"
  }),
  maxCost: optional({
    field: "maxCost",
    kind: numberIn(0, 1_000_000),
    flag: "max-cost",
    env: "PARALLEL_LLM_MAX_COST",
    doc: "Cost budget per run in USD: a run whose worst case (at the provider's prices) is higher is refused",
    defaultDoc: "none"
  }),
  cliAgentConcurrency: withDefault({
    field: "cliAgentConcurrency",
    kind: integerIn(1, 64),
    flag: "cli-agent-concurrency",
    commands: ["batch", "serve", "eval"],
    namedIn: ["ask"],
    env: "PARALLEL_LLM_CLI_AGENT_CONCURRENCY",
    doc:
      "CLI agents (`claude-code/…`, `codex/…`, `gemini-cli/…`) running at once in the whole process: a subscription's limits are per account",
    default: 2,
    defaultDoc: "2"
  }),
  codexConfig: withDefault({
    field: "codexConfig",
    // A list of texts, as a list of paths is: repeatable, comma-separated in the environment.
    kind: pathList,
    flag: "codex-config",
    commands: ["batch", "serve", "eval"],
    namedIn: ["ask"],
    env: "PARALLEL_LLM_CODEX_CONFIG",
    doc:
      "Codex `-c key=value` overrides for `codex/…` models (its user config is not read), e.g. `model_provider=\"my\"`; the answer-only overrides come after them",
    default: [],
    defaultDoc: "none"
  })
}
