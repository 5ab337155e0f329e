/**
 * The one dispatcher: an MCP handler (both protocol eras, stateless) whose per-request server registers every
 * catalogue entry, checks the tool's scope, runs its Effect as the caller (CurrentPrincipal) on the
 * application's runtime, and turns the outcome into a tool result. Domain failures become `isError` results
 * whose `structuredContent` is the error body; only unknown tools are JSON-RPC errors (the SDK's own).
 */
import {
  anonymousPrincipal,
  CurrentPrincipal,
  errorBody,
  hasScope,
  Internal,
  isDockError,
  PermissionDenied,
  type Principal,
  Unauthorized,
  ValidationError
} from "@dock/domain"
import { type CallToolResult, createMcpHandler, type McpHttpHandler, McpServer } from "@modelcontextprotocol/server"
import { Cause, Effect, Exit, Option, ParseResult, Runtime, Schema } from "effect"
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

/** Where the HTTP mount puts the authenticated caller for the per-request server. */
export const PRINCIPAL_KEY = "dock.principal"

const result = (body: unknown, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  structuredContent: body as Record<string, unknown>,
  ...(isError ? { isError: true } : {})
})

/** How much of one schema issue's message an error body carries. */
export const ISSUE_MESSAGE_MAX = 300

/** A tool's arguments that do not match its input schema: validation_error naming each offending path. */
const invalidArguments = (error: ParseResult.ParseError) => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String),
    // Schema messages quote the offending value: a 2 MiB page_content must not come back twice in the error.
    message: issue.message.length > ISSUE_MESSAGE_MAX ? `${issue.message.slice(0, ISSUE_MESSAGE_MAX)}…` : issue.message
  }))
  const first = issues[0]
  return new ValidationError({
    message: first === undefined
      ? "Invalid arguments"
      : `Invalid arguments: ${first.path.length === 0 ? "" : `${first.path.join(".")}: `}${first.message}`,
    details: { issues }
  })
}

/**
 * PostgreSQL text cannot hold U+0000, so no tool could store it: arguments carrying it (in any string or object
 * key) are refused up front as validation_error naming where, like any other invalid argument.
 */
const refuseNul = (args: unknown): Effect.Effect<void, ValidationError> => {
  const issues: Array<{ path: Array<string>; message: string }> = []
  const visit = (value: unknown, path: Array<string>) => {
    if (issues.length >= 10) return
    if (typeof value === "string") {
      if (value.includes("\u0000")) issues.push({ path, message: "text cannot contain the NUL character (U+0000)" })
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, [...path, String(index)]))
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes("\u0000")) issues.push({ path, message: "a key cannot contain the NUL character (U+0000)" })
        visit(item, [...path, key])
      }
    }
  }
  visit(args, [])
  const first = issues[0]
  return first === undefined ? Effect.void : Effect.fail(
    new ValidationError({ message: `Invalid arguments: ${first.path.join(".")}: ${first.message}`, details: { issues } })
  )
}

const scopeCheck = (entry: AnyTool, principal: Principal) => {
  if (entry.scope !== "mcp:write" || hasScope(principal, "mcp:write")) return Effect.void
  return Effect.fail(
    principal.userId === null
      ? new Unauthorized({ message: `${entry.name} needs a bearer token with the mcp:write scope` })
      : new PermissionDenied({ message: `${entry.name} needs the mcp:write scope; this token is read-only` })
  )
}

export const makeMcpHandler = <R>(
  tools: ReadonlyArray<AnyTool<R>>,
  runtime: Runtime.Runtime<R>,
  server: { readonly name: string; readonly version: string }
): McpHttpHandler => {
  const run = Runtime.runPromiseExit(runtime)
  // Schemas are built once; every request's server shares them.
  const registered = tools.map((entry) => ({
    entry,
    input: mcpSchema(entry.input, { validate: false }),
    decode: Schema.decodeUnknown(entry.input, { onExcessProperty: "error", errors: "all" }),
    output: mcpSchema(Schema.Union(entry.output, ErrorBodySchema)),
    encode: Schema.encode(entry.output)
  }))

  const call = (entry: (typeof registered)[number], args: unknown, principal: Principal, signal: AbortSignal) =>
    run(
      Effect.gen(function*() {
        yield* scopeCheck(entry.entry, principal)
        yield* refuseNul(args)
        const input = yield* entry.decode(args ?? {}).pipe(Effect.mapError(invalidArguments))
        const output = yield* entry.entry.run(input)
        return yield* Effect.orDie(entry.encode(output))
      }).pipe(
        Effect.provideService(CurrentPrincipal, principal),
        Effect.withSpan(`mcp.${entry.entry.name}`)
      ),
      { signal }
    ).then((exit): CallToolResult => {
      if (Exit.isSuccess(exit)) return result(exit.value, false)
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && isDockError(failure.value)) return result(errorBody(failure.value), true)
      const requestId = crypto.randomUUID()
      Runtime.runFork(runtime)(Effect.logError(`Tool ${entry.entry.name} failed (request id ${requestId})`, exit.cause))
      return result(errorBody(new Internal({ message: `Internal error (request id ${requestId})`, request_id: requestId })), true)
    })

  return createMcpHandler(
    (context) => {
      const principal = (context.authInfo?.extra?.[PRINCIPAL_KEY] as Principal | undefined) ?? anonymousPrincipal
      const mcp = new McpServer(server, { capabilities: { tools: { listChanged: false } } })
      for (const entry of registered) {
        mcp.registerTool(
          entry.entry.name,
          {
            description: entry.entry.description,
            inputSchema: entry.input,
            outputSchema: entry.output,
            annotations: { ...entry.entry.annotations, openWorldHint: false }
          },
          (args, extra) => call(entry, args, principal, extra.mcpReq.signal)
        )
      }
      return mcp
    },
    {
      onerror: (error) => Runtime.runFork(runtime)(Effect.logWarning(`MCP: ${error.message}`))
    }
  )
}
