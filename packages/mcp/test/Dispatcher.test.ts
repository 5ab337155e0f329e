/**
 * The dispatcher, driven the way the HTTP mount drives it (a JSON-RPC POST to the handler with the caller in its
 * AuthInfo), with small tools built on the real Tool API: argument validation, domain errors, the scope check,
 * success encoding, the caller crossing the SDK, and unknown tools.
 */
import { anonymousPrincipal, CurrentPrincipal, NotFound, type Principal, type TokenId, type UserId } from "@dock/domain"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Runtime, Schema } from "effect"
import { callerAuthInfo } from "../src/CallerAuth.ts"
import { makeMcpHandler } from "../src/Dispatcher.ts"
import { READ, tool, WRITE } from "../src/Tool.ts"

const note = tool({
  name: "get_note",
  description: "Reads one note by its title.",
  input: Schema.Struct({
    title: Schema.String.pipe(Schema.maxLength(10)),
    count: Schema.optional(Schema.Int)
  }),
  output: Schema.Struct({ title: Schema.String, reader: Schema.NullOr(Schema.String), at: Schema.Date }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ title }) =>
    title === "missing"
      ? Effect.fail(new NotFound({ message: `No note titled ${title}` }))
      : Effect.map(CurrentPrincipal, (principal) => ({ title, reader: principal.username, at: new Date(0) }))
})

const erase = tool({
  name: "erase_note",
  description: "Erases a note.",
  input: Schema.Struct({ title: Schema.String }),
  output: Schema.Struct({ erased: Schema.Boolean }),
  annotations: WRITE,
  scope: "mcp:write",
  run: () => Effect.succeed({ erased: true })
})

const handler = makeMcpHandler([note, erase], Runtime.defaultRuntime, { name: "dock-test", version: "0.0.0" }, {
  toolCallsInFlightPerCaller: 4
})

const reader: Principal = {
  userId: "4f1c2a53-6a0e-4c39-9d47-2f0d1c7e8b10" as UserId,
  username: "ada",
  tokenId: "0b7e6c1d-3f2a-4e5b-8c9d-a1b2c3d4e5f6" as TokenId,
  scopes: ["mcp:read"],
  allowedBucketIds: null,
  sandbox: false,
  agentLabel: "reader"
}

/** One raw tools/call (no initialize, as stateless clients send it) as `principal`; the JSON-RPC answer. */
const callTool = async (name: string, args: unknown, principal: Principal = anonymousPrincipal) => {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }
  const response = await handler.fetch(
    new Request("http://dock.test/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25"
      },
      body: JSON.stringify(body)
    }),
    { authInfo: callerAuthInfo({ principal, key: principal.tokenId ?? "address:192.0.2.1" }), parsedBody: body }
  )
  const text = await response.text()
  const data = text.split("\n").find((line) => line.startsWith("data: "))
  return JSON.parse(data === undefined ? text : data.slice(6))
}

describe("Dispatcher", () => {
  it("success: the output is encoded by the tool's schema, as structuredContent and as text", async () => {
    const answer = await callTool("get_note", { title: "hello" }, reader)
    const expected = { title: "hello", reader: "ada", at: "1970-01-01T00:00:00.000Z" }
    expect(answer.result.isError).toBeUndefined()
    expect(answer.result.structuredContent).toEqual(expected)
    expect(answer.result.content).toEqual([{ type: "text", text: JSON.stringify(expected) }])
  })

  it("the caller crosses the SDK: the tool runs as the principal the mount put in AuthInfo", async () => {
    expect((await callTool("get_note", { title: "hello" })).result.structuredContent.reader).toBeNull()
    expect((await callTool("get_note", { title: "hello" }, reader)).result.structuredContent.reader).toBe("ada")
  })

  it("arguments that break the input schema: validation_error naming each offending path", async () => {
    const answer = await callTool("get_note", { title: "far too long a title", count: 1.5, extra: true }, reader)
    expect(answer.result.isError).toBe(true)
    const error = answer.result.structuredContent.error
    expect(error).toMatchObject({ code: "validation_error", status: 400 })
    // The first issue names the message; every issue is listed (an optional field reports each union member).
    expect(error.message).toBe(`Invalid arguments: extra is not a parameter of this tool (expected: "title" | "count")`)
    expect(error.details).toEqual({
      issues: [
        { path: ["extra"], message: `is unexpected, expected: "title" | "count"` },
        { path: ["title"], message: `Expected a string at most 10 character(s) long, actual "far too long a title"` },
        { path: ["count"], message: "Expected an integer, actual 1.5" },
        { path: ["count"], message: "Expected undefined, actual 1.5" }
      ]
    })
    expect(JSON.parse(answer.result.content[0].text)).toEqual(answer.result.structuredContent)
  })

  it("missing arguments are validation_error naming the required field", async () => {
    const answer = await callTool("get_note", {}, reader)
    expect(answer.result.structuredContent.error).toMatchObject({
      code: "validation_error",
      status: 400,
      details: { issues: [{ path: ["title"], message: expect.any(String) }] },
      message: "Invalid arguments: title is required"
    })
  })

  it("a domain error is a tool result carrying its code and status, not a JSON-RPC error", async () => {
    const answer = await callTool("get_note", { title: "missing" }, reader)
    expect(answer.error).toBeUndefined()
    expect(answer.result.isError).toBe(true)
    expect(answer.result.structuredContent).toEqual({
      error: { code: "not_found", status: 404, message: "No note titled missing" }
    })
  })

  it("a write tool needs mcp:write: unauthorized without a token, permission_denied with a read-only one", async () => {
    const anonymous = await callTool("erase_note", { title: "a" })
    expect(anonymous.result.structuredContent.error).toMatchObject({ code: "unauthorized", status: 401 })
    const readOnly = await callTool("erase_note", { title: "a" }, reader)
    expect(readOnly.result.structuredContent.error).toMatchObject({ code: "permission_denied", status: 403 })
    const writer = await callTool("erase_note", { title: "a" }, { ...reader, scopes: ["mcp:write"] })
    expect(writer.result.structuredContent).toEqual({ erased: true })
  })

  it("an unknown tool is the SDK's JSON-RPC error", async () => {
    const answer = await callTool("no_such_tool", {}, reader)
    expect(answer.result).toBeUndefined()
    expect(answer.error).toMatchObject({ code: expect.any(Number), message: expect.stringContaining("no_such_tool") })
  })
})
