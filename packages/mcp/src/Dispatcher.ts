/**
 * The one dispatcher: an MCP handler (both protocol eras, stateless) that checks the tool's scope, runs its Effect
 * as the caller (CurrentPrincipal) on the application's runtime, and turns the outcome into a tool result. Domain
 * failures become `isError` results whose `structuredContent` is the error body; only unknown tools are JSON-RPC
 * errors. Everything about the catalogue (the `tools/list` answer, its JSON Schemas, the decoders and encoders,
 * the lookup by name) is built once per handler; a request gets only the SDK's protocol object, which the SDK
 * requires fresh for every exchange, with the two handlers that read from what was built. Every write tool also
 * takes an optional `idempotency_key` (Idempotency.ts): a keyed call runs through the domain's Idempotency, once.
 */
import {
  CurrentPrincipal,
  errorBody,
  fingerprintOf,
  hasScope,
  type Idempotency,
  Internal,
  isDockError,
  ownerOf,
  PermissionDenied,
  type Principal,
  RateLimited,
  spanned,
  statementTimeoutError,
  Unauthorized,
  ValidationError
} from "@dock/domain"
import {
  type CallToolResult,
  createMcpHandler,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type Tool as ListedTool
} from "@modelcontextprotocol/server"
import { Cause, type Context, Effect, Exit, identity, Option, ParseResult, Runtime, Schema, type Tracer } from "effect"
import { ALL_ISSUES_MAX_VALUES, inspectArguments, ISSUES_MAX } from "./Arguments.ts"
import { callerOf } from "./CallerAuth.ts"
import { makeCallGate } from "./CallGate.ts"
import { decodeKeyArgument, splitIdempotencyKey, withIdempotencyKey } from "./Idempotency.ts"
import { mcpSchema } from "./JsonSchema.ts"
import type { AnyTool } from "./Tool.ts"

/**
 * The error body as a schema: a tool's advertised output is its success shape *or* this, because a failed call's
 * structuredContent is the error body. (Clients such as the v1 SDK check every result's structuredContent
 * against the output schema, error results included.)
 */
export const ErrorBodySchema = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    status: Schema.Int,
    message: Schema.String,
    details: Schema.optionalWith(Schema.Unknown, { exact: true }),
    retry_after_seconds: Schema.optionalWith(Schema.Number, { exact: true }),
    request_id: Schema.optionalWith(Schema.String, { exact: true })
  })
})

const result = (body: unknown, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  structuredContent: body as Record<string, unknown>,
  ...(isError ? { isError: true } : {})
})

/** How much of one schema issue's message an error body carries. */
export const ISSUE_MESSAGE_MAX = 300

/**
 * One schema issue as a sentence naming its field: "row_id must be a row's UUID, not "abc"", "title is required"
 * (Effect's own texts read "Expected <what>, actual <value>", with the field apart).
 */
const issueSentence = (tag: string, issue: { readonly path: ReadonlyArray<string>; readonly message: string }) => {
  const field = issue.path.length === 0 ? "the arguments" : issue.path.join(".")
  if (tag === "Missing") return `${field} is required`
  if (tag === "Unexpected") {
    return `${field} is not a parameter of this tool (${issue.message.replace(/^is unexpected, /, "")})`
  }
  const expected = /^Expected (.+?), actual (.+)$/s.exec(issue.message)
  if (expected === null) return `${field}: ${issue.message}`
  const what = expected[1]!
  // "The row's UUID" (a description) reads "the row's UUID" mid-sentence; "UUID" keeps its capitals.
  const noun = /^[A-Z](?![A-Z])/.test(what) ? `${what[0]!.toLowerCase()}${what.slice(1)}` : what
  return `${field} must be ${noun}, not ${expected[2]}`
}

/**
 * A tool's arguments that do not match its input schema: validation_error naming the offending paths — the
 * first ISSUES_MAX of them, with the total count, so the body stays a few KB whatever was sent.
 */
const invalidArguments = (error: ParseResult.ParseError) => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  const issues = all.slice(0, ISSUES_MAX).map((issue) => ({
    path: issue.path.map(String),
    // Schema messages quote the offending value: a 2 MiB page_content must not come back twice in the error.
    message: issue.message.length > ISSUE_MESSAGE_MAX ? `${issue.message.slice(0, ISSUE_MESSAGE_MAX)}…` : issue.message
  }))
  const first = issues[0]
  return new ValidationError({
    message: first === undefined ? "Invalid arguments" : `Invalid arguments: ${issueSentence(all[0]!._tag, first)}`,
    details: { issues, ...(all.length > issues.length ? { issue_count: all.length } : {}) }
  })
}

const scopeCheck = (entry: AnyTool, principal: Principal) => {
  if (entry.scope !== "mcp:write" || hasScope(principal, "mcp:write")) return Effect.void
  return Effect.fail(
    principal.userId === null
      ? new Unauthorized({ message: `${entry.name} needs a bearer token with the mcp:write scope` })
      : new PermissionDenied({ message: `${entry.name} needs the mcp:write scope; this token is read-only` })
  )
}

/** Told of every finished tool call (metrics): the tool, "ok" or the error code, and how long it took. */
export type ToolCallObserver = (tool: string, outcome: string, seconds: number) => void

const outcomeOf = (result: CallToolResult): string => {
  if (result.isError !== true) return "ok"
  const code = (result.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code
  return typeof code === "string" ? code : "internal"
}

export const makeMcpHandler = <R>(
  tools: ReadonlyArray<AnyTool<R>>,
  runtime: Runtime.Runtime<R>,
  server: { readonly name: string; readonly version: string },
  options: {
    readonly toolCallsInFlightPerCaller: number
    readonly observe?: ToolCallObserver | undefined
    /**
     * Where idempotency keys are kept: when given, every tool of scope mcp:write takes an optional
     * `idempotency_key` (Idempotency.ts), advertised in its input schema.
     */
    readonly idempotency?: Context.Tag.Service<typeof Idempotency> | undefined
  }
): McpHttpHandler => {
  const observe = options.observe
  const idempotency = options.idempotency
  const takesKey = (entry: AnyTool) => idempotency !== undefined && entry.scope === "mcp:write"
  const run = Runtime.runPromiseExit(runtime)
  const gate = makeCallGate(options.toolCallsInFlightPerCaller)
  const registered = new Map(tools.map((entry) => {
    // The SDK is given JSON Schemas only: it validates nothing (results are encoded by their own Schema).
    const output = mcpSchema(Schema.Union(entry.output, ErrorBodySchema), { validate: false })
    return [entry.name, {
      entry,
      decodeAll: Schema.decodeUnknown(entry.input, { onExcessProperty: "error", errors: "all" }),
      decodeFirst: Schema.decodeUnknown(entry.input, { onExcessProperty: "error", errors: "first" }),
      /** The advertised output schema, which the SDK's result projection is given (as McpServer gives it). */
      outputJson: output["~standard"].jsonSchema.output({ target: "draft-2020-12" }),
      encode: Schema.encode(entry.output),
      takesKey: takesKey(entry)
    }] as const
  }))
  type Registered = typeof registered extends Map<string, infer R> ? R : never
  // The tools/list answer: what McpServer lists for a registered tool (our input schemas accept anything while
  // advertising the real JSON Schema: the dispatcher validates, so a bad argument gets the one error body).
  const listed: { tools: Array<ListedTool> } = {
    tools: tools.map((entry) => {
      const json = mcpSchema(entry.input, { validate: false })["~standard"].jsonSchema.input({
        target: "draft-2020-12"
      })
      return {
        name: entry.name,
        description: entry.description,
        inputSchema: (takesKey(entry) ? withIdempotencyKey(json) : json) as ListedTool["inputSchema"],
        annotations: { ...entry.annotations, openWorldHint: false },
        outputSchema: registered.get(entry.name)!.outputJson as ListedTool["outputSchema"]
      }
    })
  }

  /** A write sent with an idempotency_key: once per caller and key (the domain's Idempotency). */
  const keyed = <E, R>(
    tool: string,
    key: unknown,
    args: unknown,
    principal: Principal,
    write: Effect.Effect<unknown, E, R>
  ) =>
    Effect.gen(function*() {
      const decoded = yield* decodeKeyArgument({ idempotency_key: key }).pipe(Effect.mapError(invalidArguments))
      const owner = ownerOf(principal)
      if (owner === undefined || idempotency === undefined) {
        return yield* new ValidationError({ message: "idempotency_key needs a caller with a token" })
      }
      const call = { owner, key: decoded.idempotency_key, tool, fingerprint: fingerprintOf(args) }
      return yield* idempotency.once(call, write)
    })

  const call = (
    entry: Registered,
    args: unknown,
    principal: Principal,
    signal: AbortSignal,
    request: { readonly requestId?: string | undefined; readonly parentSpan?: Tracer.AnySpan | undefined }
  ) =>
    run(
      Effect.gen(function*() {
        yield* scopeCheck(entry.entry, principal)
        // Bounded and linear, before the schema walks the arguments (and lists what it finds).
        const inspected = inspectArguments(args)
        if (inspected instanceof ValidationError) return yield* inspected
        const decode = inspected.values <= ALL_ISSUES_MAX_VALUES ? entry.decodeAll : entry.decodeFirst
        const { key, rest } = entry.takesKey ? splitIdempotencyKey(args) : { key: undefined, rest: args }
        const input = yield* decode(rest ?? {}).pipe(Effect.mapError(invalidArguments))
        const write = Effect.flatMap(entry.entry.run(input), (output) => Effect.orDie(entry.encode(output)))
        if (key === undefined || idempotency === undefined) return yield* write
        return yield* keyed(entry.entry.name, key, rest ?? {}, principal, write)
      }).pipe(
        Effect.provideService(CurrentPrincipal, principal),
        spanned(
          `mcp.${entry.entry.name}`,
          request.parentSpan === undefined ? {} : { parent: request.parentSpan }
        ),
        request.requestId === undefined ? identity : Effect.annotateLogs("request_id", request.requestId)
      ),
      { signal }
    ).then((exit): CallToolResult => {
      if (Exit.isSuccess(exit)) return result(exit.value, false)
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && isDockError(failure.value)) return result(errorBody(failure.value), true)
      const timedOut = statementTimeoutError(exit.cause)
      if (timedOut !== undefined) return result(errorBody(timedOut), true)
      const requestId = request.requestId ?? crypto.randomUUID()
      Runtime.runFork(runtime)(
        Effect.logError(`Tool ${entry.entry.name} failed (request id ${requestId})`, exit.cause).pipe(
          Effect.annotateLogs("request_id", requestId)
        )
      )
      return result(
        errorBody(new Internal({ message: `Internal error (request id ${requestId})`, request_id: requestId })),
        true
      )
    })

  return createMcpHandler(
    (context) => {
      const { key: caller, principal, ...request } = callerOf(context.authInfo)
      const mcp = new Server(server, { capabilities: { tools: { listChanged: false } } })
      mcp.setRequestHandler("tools/list", () => listed)
      mcp.setRequestHandler("tools/call", async (toolCall, extra) => {
        const entry = registered.get(toolCall.params.name)
        // As McpServer answers an unknown tool: the one JSON-RPC error of tools/call (not counted by tool: a name
        // the client made up must not become a label).
        if (entry === undefined) {
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${toolCall.params.name} not found`)
        }
        const signal = extra.mcpReq.signal
        const started = observe === undefined ? 0 : performance.now()
        const outcome = await gate.run(
          caller,
          signal,
          () => call(entry, toolCall.params.arguments, principal, signal, request)
        )
        const answer = outcome instanceof RateLimited ? result(errorBody(outcome), true) : outcome
        if (observe !== undefined) observe(entry.entry.name, outcomeOf(answer), (performance.now() - started) / 1000)
        return mcp.projectCallToolResult(answer, entry.outputJson)
      })
      return mcp
    },
    {
      onerror: (error) => Runtime.runFork(runtime)(Effect.logWarning(`MCP: ${error.message}`))
    }
  )
}
