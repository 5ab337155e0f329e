/** Shared by the Deno smoke check and the startup benchmark: free ports, process start-up, HTTP polling. */
import { type ChildProcess, spawn } from "node:child_process"
import * as Net from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

export interface Started {
  readonly child: ChildProcess
  readonly baseUrl: string
  /** Milliseconds from spawn until /readyz answered 200. */
  readonly readyMs: number
  readonly output: () => string
}

/** Spawns a server process and waits (bounded) until /readyz answers 200. */
export const startServer = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs = 60_000
): Promise<Started> => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(command, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const baseUrl = `http://127.0.0.1:${port}`
  while (performance.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`)
    const ok = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false)
    if (ok) return { child, baseUrl, readyMs: performance.now() - started, output: () => output }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  child.kill("SIGKILL")
  throw new Error(`server did not become ready within ${timeoutMs} ms:\n${output}`)
}

/** SIGTERM, then wait for the exit code. */
export const stopServer = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
    child.kill("SIGTERM")
  })
