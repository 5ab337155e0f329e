/**
 * The real server as a child process (`node --conditions=dock-source --import tsx packages/server/src/main.ts`),
 * as `npm start` runs it: started on a free port with a chosen environment, waited for through /healthz, and
 * stopped with SIGTERM when the scope closes.
 */
import { scopedPostgresDatabase, testServerUrl } from "@dock/domain/testing"
import { Data, Deferred, Duration, Effect, Exit, FiberId, Option, Redacted } from "effect"
import * as ChildProcess from "node:child_process"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { scopedTempDir } from "./TestServer.ts"

/** The repository root, where `npm start` runs. */
export const REPO_ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

export class ProcessFailed extends Data.TaggedError("ProcessFailed")<{ readonly message: string }> {}

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ServerProcess {
  readonly port: number
  /** http://127.0.0.1:<port> */
  readonly url: string
  readonly pid: number
  /** Milliseconds from spawn until /healthz first answered 200. */
  readonly startupMillis: number
  readonly stdout: () => string
  readonly stderr: () => string
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits (bounded) for the process to end. */
  readonly exit: (within: Duration.DurationInput) => Effect.Effect<ProcessExit, ProcessFailed>
}

/** A port that was free a moment ago: the OS picks it for a throwaway listener, which is closed again. */
export const freePort = Effect.async<number, ProcessFailed>((resume) => {
  const server = Net.createServer()
  server.once("error", (cause) => resume(Effect.fail(new ProcessFailed({ message: `No free port: ${cause}` }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address() as Net.AddressInfo
    server.close(() => resume(Effect.succeed(address.port)))
  })
})

/** Whether something accepts TCP connections on 127.0.0.1:port right now. */
export const accepts = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.connect({ host: "127.0.0.1", port })
    socket.setTimeout(2_000)
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("timeout", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

/**
 * Repeats `check` every `every` until it yields true, failing once `within` has passed. For waiting on another
 * process, which no Effect clock can drive.
 */
export const pollUntil = <E, R>(
  what: string,
  check: Effect.Effect<boolean, E, R>,
  options: { readonly within: Duration.DurationInput; readonly every?: Duration.DurationInput }
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(options.within)
    while (!(yield* check)) {
      if (Date.now() > deadline) {
        return yield* new ProcessFailed({ message: `${what}: not within ${Duration.format(options.within)}` })
      }
      yield* Effect.sleep(options.every ?? "50 millis")
    }
  })

/** The parent's environment minus everything the server reads, plus `env`. */
const childEnv = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !/^(DOCK_|DATABASE_URL$|PORT$|HOST$|ANONYMOUS_REGISTRATION_ENABLED$)/.test(name)
    )
  )
  return { ...inherited, ...env }
}

const spawnRaw = (env: Record<string, string>) =>
  Effect.sync(() => {
    const started = Date.now()
    const child = ChildProcess.spawn(
      process.execPath,
      ["--conditions=dock-source", "--import", "tsx", "packages/server/src/main.ts"],
      { cwd: REPO_ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = Deferred.unsafeMake<ProcessExit>(FiberId.none)
    child.once("exit", (code, signal) => Deferred.unsafeDone(exited, Exit.succeed({ code, signal })))
    child.once("error", () => Deferred.unsafeDone(exited, Exit.succeed({ code: null, signal: null })))
    return { child, started, exited, stdout: () => stdout, stderr: () => stderr }
  })

type Raw = Effect.Effect.Success<ReturnType<typeof spawnRaw>>

const awaitExit = (raw: Raw, within: Duration.DurationInput) =>
  Deferred.await(raw.exited).pipe(
    Effect.timeoutFail({
      duration: within,
      onTimeout: () =>
        new ProcessFailed({
          message: `The server process did not exit within ${Duration.format(within)}\nstderr:\n${raw.stderr()}`
        })
    })
  )

/** SIGTERM, then SIGKILL if it is still running after 20 seconds. */
const stop = (raw: Raw) =>
  Effect.gen(function*() {
    if (raw.child.exitCode !== null || raw.child.signalCode !== null) return
    raw.child.kill("SIGTERM")
    const exit = yield* Effect.either(awaitExit(raw, "20 seconds"))
    if (exit._tag === "Left") raw.child.kill("SIGKILL")
  })

/** Runs the server with `env` until it exits on its own (for configurations it must refuse). */
export const runToExit = (env: Record<string, string>, within: Duration.DurationInput = "30 seconds") =>
  Effect.acquireUseRelease(
    spawnRaw(env),
    (raw) => Effect.map(awaitExit(raw, within), (exit) => ({ ...exit, stdout: raw.stdout(), stderr: raw.stderr() })),
    stop
  )

/**
 * Starts the server on a free port with `env` (PORT and HOST are set here) and waits until GET /healthz answers
 * 200, at most `within`. The process gets SIGTERM when the scope closes.
 */
export const spawnServer = (env: Record<string, string>, options: { readonly within?: Duration.DurationInput } = {}) =>
  Effect.gen(function*() {
    const port = yield* freePort
    const url = `http://127.0.0.1:${port}`
    const raw = yield* Effect.acquireRelease(spawnRaw({ PORT: String(port), HOST: "127.0.0.1", ...env }), stop)
    const healthy = Effect.promise(() =>
      fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)
    )
    const exitedEarly = Effect.map(Deferred.poll(raw.exited), (exit) => exit._tag === "Some")
    yield* pollUntil(
      "GET /healthz",
      Effect.flatMap(exitedEarly, (early) =>
        early
          ? Effect.fail(
            new ProcessFailed({ message: `The server process exited while starting\nstderr:\n${raw.stderr()}` })
          )
          : healthy),
      { within: options.within ?? "30 seconds", every: "50 millis" }
    ).pipe(
      Effect.mapError((error) => new ProcessFailed({ message: `${error.message}\nstderr:\n${raw.stderr()}` }))
    )
    const startupMillis = Date.now() - raw.started
    return {
      port,
      url,
      pid: raw.child.pid!,
      startupMillis,
      stdout: raw.stdout,
      stderr: raw.stderr,
      signal: (signal) => Effect.sync(() => void raw.child.kill(signal)),
      exit: (within) => awaitExit(raw, within)
    } satisfies ServerProcess
  })

/**
 * Two server processes on one fresh PostgreSQL database (on DOCK_TEST_DATABASE_URL's server, dropped when the
 * scope closes), each with its own data directory and `env`, started together; both answer /healthz when this
 * does. For the tests that what one instance does holds on the other.
 */
export const spawnTwoServersOnOneDatabase = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const databaseUrl = yield* scopedPostgresDatabase(Option.getOrThrow(yield* testServerUrl))
    const spawnOne = Effect.flatMap(
      scopedTempDir("dock-instance-"),
      (dataDir) =>
        Effect.map(
          spawnServer({ DATABASE_URL: Redacted.value(databaseUrl), DOCK_DATA_DIR: dataDir, ...env }, {
            within: "60 seconds"
          }),
          (server) => ({ ...server, dataDir })
        )
    )
    const [a, b] = yield* Effect.all([spawnOne, spawnOne], { concurrency: "unbounded" })
    return { databaseUrl, servers: [a, b] as const }
  })

/** The answer to a request opened with `openAccepted`, read to its end. */
export interface AcceptedReply {
  readonly status: number
  readonly text: string
  readonly connection: string | undefined
}

/**
 * Opens `POST path` on 127.0.0.1:`port` with `Expect: 100-continue` and waits for the server's "100 Continue", which
 * Node sends just as it hands the request to the handler: proof that the request was accepted and is in flight.
 * The body (`contentLength` bytes) is the caller's to write to `request`; `answered` settles with the whole answer,
 * or with the error the connection met.
 */
export const openAccepted = (port: number, options: {
  readonly path: string
  readonly headers: Record<string, string>
  readonly contentLength: number
  readonly agent: Http.Agent | false
  readonly within: Duration.DurationInput
}) =>
  Effect.gen(function*() {
    const continued = yield* Deferred.make<void>()
    const answered = yield* Deferred.make<AcceptedReply, Error>()
    const request = Http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: options.path,
      agent: options.agent,
      headers: { ...options.headers, "content-length": String(options.contentLength), expect: "100-continue" }
    })
    request.on("continue", () => Deferred.unsafeDone(continued, Exit.void))
    request.on("error", (error) => Deferred.unsafeDone(answered, Exit.fail(error)))
    request.on("response", (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("error", (error) => Deferred.unsafeDone(answered, Exit.fail(error)))
      response.on("end", () =>
        Deferred.unsafeDone(
          answered,
          Exit.succeed({ status: response.statusCode ?? 0, text, connection: response.headers.connection })
        ))
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => request.destroy()))
    request.flushHeaders()
    yield* Deferred.await(continued).pipe(Effect.timeoutFail({
      duration: options.within,
      onTimeout: () => new ProcessFailed({ message: `The server never accepted POST ${options.path}` })
    }))
    return { request, answered }
  })
