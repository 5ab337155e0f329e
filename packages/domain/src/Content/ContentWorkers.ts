/**
 * The hard bound on untrusted-content processing (architecture §15): Markdown, HTML and front matter are parsed,
 * rendered and sanitized in a few worker threads, never on the event loop, and each job has a deadline. A job
 * past it, or one that exhausts its worker's heap or crashes it, is `validation_error` ("too complex to
 * render"); its worker is terminated and a fresh one takes its place, so the next job runs as usual. The event
 * loop only ever waits on a message. Parser cost estimates (BoundedMarkdown.ts) remain a fast first cut; this
 * is the bound.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import { InvalidFrontMatter, InvalidSlug, Unavailable, ValidationError } from "../Errors.ts"
import { Limits } from "../Limits.ts"
// Types only: the job table (ContentJobs.ts) loads the parsers and the sanitizer, which only the workers need.
import type {
  ContentJobInput,
  ContentJobMessage,
  ContentJobName,
  ContentJobOutput,
  ContentRefusal,
  ContentWorkerMessage
} from "./ContentJobs.ts"

/** The jobs by name (ContentJobs.ts checks its table against this list), for the counters of `stats`. */
export const CONTENT_JOB_NAMES = [
  "sanitizeHtml",
  "htmlPage",
  "markdownPage",
  "sourceText",
  "renderMarkdown",
  "pageEdits",
  "renderHtml",
  "lineDiff"
] as const
export type ContentJobNames = (typeof CONTENT_JOB_NAMES)[number]

interface RefusalErrors {
  readonly InvalidFrontMatter: InvalidFrontMatter
  readonly InvalidSlug: InvalidSlug
  readonly ValidationError: ValidationError
}

/** A job's refusal of its content made its error class again, with its code and message unchanged. */
export const refusalError = <T extends ContentRefusal["_tag"]>(
  { _tag, ...error }: ContentRefusal & { readonly _tag: T }
): RefusalErrors[T] =>
  (_tag === "InvalidSlug"
    ? new InvalidSlug(error)
    : _tag === "InvalidFrontMatter"
    ? new InvalidFrontMatter(error)
    : new ValidationError(error)) as RefusalErrors[T]

/**
 * Each worker's V8 heap. Rendering 1 MiB of ordinary Markdown peaks near 270 MB here; a job that needs more
 * than this ends its worker (ERR_WORKER_OUT_OF_MEMORY) rather than the server.
 */
export const CONTENT_WORKER_HEAP_MB = 512
/** Jobs waiting for a worker; past this a job is refused as `unavailable` rather than queued without end. */
export const CONTENT_QUEUE_MAX = 100

/** The input size that gets the whole configured deadline: the largest page (1 MiB). */
export const FULL_DEADLINE_CHARS = 1_048_576
/** No job gets less than this (or the configured deadline, when that is shorter). */
export const DEADLINE_FLOOR_MS = 1000

/**
 * One job's deadline: the configured deadline for a 1 MiB input, proportionally less for a smaller one, never
 * below the floor. Ordinary text takes time in proportion to its size (1 MiB of prose ~1.4 s idle, 3-4 s on a
 * busy two-core machine), so the largest legitimate page needs the whole deadline; hostile text takes far more than
 * its size says, so a small hostile input is stopped much sooner than a large one.
 */
export const jobDeadlineMs = (deadlineMs: number, chars: number) =>
  Math.max(Math.min(DEADLINE_FLOOR_MS, deadlineMs), Math.ceil((deadlineMs * chars) / FULL_DEADLINE_CHARS))

/** Characters of text in a job's input (its top-level strings: the content, the HTML). */
const inputChars = (input: unknown) =>
  Object.values(input as Record<string, unknown>).reduce<number>(
    (sum, value) => sum + (typeof value === "string" ? value.length : 0),
    0
  )

export interface ContentWorkerOptions {
  readonly workers: number
  /** The deadline of a 1 MiB input; smaller inputs get proportionally less (jobDeadlineMs). */
  readonly deadline: Duration.Duration
  readonly heapMb?: number
}

export interface ContentWorkerStats {
  /** Jobs handed to a worker, by kind. */
  readonly started: Readonly<Record<ContentJobName, number>>
  /** Jobs that ended their worker: past the deadline, out of memory, or crashed. */
  readonly stopped: number
  /** The same jobs by why their worker was stopped (deadline: DOCK_RENDER_DEADLINE was hit). */
  readonly stoppedByReason: Readonly<Record<"deadline" | "memory" | "crashed", number>>
  /** Worker threads started so far (a stopped worker is replaced on demand). */
  readonly workersStarted: number
}

export class ContentWorkers extends Context.Tag("@dock/domain/ContentWorkers")<ContentWorkers, {
  /** Runs one job in a worker; its input and output are copied across the thread boundary. */
  readonly run: <K extends ContentJobName>(
    name: K,
    input: ContentJobInput<K>
  ) => Effect.Effect<ContentJobOutput<K>, ValidationError | Unavailable>
  readonly stats: Effect.Effect<ContentWorkerStats>
}>() {}

/** Why a job was stopped, as the caller sees it. */
const tooComplex = (reason: "deadline" | "memory" | "crashed" | "stack", deadline: Duration.Duration) =>
  new ValidationError({
    message: reason === "deadline"
      ? `The content is too complex to render: processing was stopped after ${
        Duration.format(Duration.millis(Duration.toMillis(deadline)))
      }`
      : reason === "memory"
      ? "The content is too complex to render: processing ran out of memory"
      : reason === "stack"
      ? "The content is too complex to render: it is nested too deeply"
      : "The content is too complex to render: processing failed",
    details: { reason, ...(reason === "deadline" ? { deadline_ms: Duration.toMillis(deadline) } : {}) }
  })

/**
 * The worker's entry: compiled code (dist/) has ContentWorker.js next to it and Deno runs TypeScript itself;
 * Node running the sources (npm start, vitest) starts through a bootstrap that registers tsx in the worker.
 */
const workerEntry = (): URL =>
  import.meta.url.endsWith(".js")
    ? new URL("./ContentWorker.js", import.meta.url)
    : "Deno" in globalThis
    ? new URL("./ContentWorker.ts", import.meta.url)
    : new URL("./ContentWorkerTsx.mjs", import.meta.url)

interface Job {
  readonly id: number
  readonly name: ContentJobName
  readonly input: unknown
  /** How long a worker may spend on it (jobDeadlineMs). */
  readonly deadline: Duration.Duration
  /** Settles the caller's effect; replaced by a no-op once settled or abandoned. */
  settle: (result: Effect.Effect<unknown, ValidationError | Unavailable>) => void
}

interface Slot {
  readonly worker: Worker
  ready: boolean
  job: Job | undefined
  timer: ReturnType<typeof setTimeout> | undefined
  /** Set when the pool terminated the worker itself (its exit is then expected). */
  retired: boolean
  error: unknown
}

const noStats = (): Record<ContentJobName, number> =>
  Object.fromEntries(CONTENT_JOB_NAMES.map((name) => [name, 0])) as Record<ContentJobName, number>

/** A pool of `workers` threads, started by its first job; `close` terminates them all. */
export const makeContentWorkers = (options: ContentWorkerOptions) => {
  const deadlineMs = Duration.toMillis(options.deadline)
  const queue: Array<Job> = []
  const slots = new Set<Slot>()
  const started = noStats()
  let stopped = 0
  const stoppedByReason = { deadline: 0, memory: 0, crashed: 0 }
  let workersStarted = 0
  let nextId = 1
  let closed = false

  const settle = (job: Job, result: Effect.Effect<unknown, ValidationError | Unavailable>) => {
    const settle = job.settle
    job.settle = () => {}
    settle(result)
  }

  const spawn = () => {
    const worker = new Worker(workerEntry(), {
      // Nothing of the server's own flags (loaders, heap size) applies to the worker.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.heapMb ?? CONTENT_WORKER_HEAP_MB }
    })
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined, retired: false, error: undefined }
    slots.add(slot)
    workersStarted += 1
    worker.on("message", (message: ContentWorkerMessage) => answered(slot, message))
    worker.on("error", (error) => {
      slot.error = error
    })
    worker.on("exit", () => exited(slot))
  }

  const start = (slot: Slot, job: Job) => {
    slot.job = job
    started[job.name] += 1
    // Wall-clock time, not Effect's Clock: the deadline bounds what the worker really spends.
    slot.timer = setTimeout(() => overran(slot), Duration.toMillis(job.deadline))
    slot.worker.postMessage({ id: job.id, name: job.name, input: job.input } satisfies ContentJobMessage)
  }

  /**
   * Hands waiting jobs to idle workers. The first job starts the whole pool: a start-up takes about a second, so
   * while one worker is busy with (or being stopped for) a runaway document, another is ready for the next job.
   */
  const dispatch = () => {
    if (closed) return
    for (const slot of slots) {
      if (queue.length > 0 && slot.ready && slot.job === undefined) start(slot, queue.shift()!)
    }
    if (queue.length > 0) {
      while (slots.size < options.workers) spawn()
    }
    // Workers keep the process alive only while jobs run or wait (a script awaiting one must not exit early).
    for (const slot of slots) {
      if (slot.job !== undefined || queue.length > 0) slot.worker.ref()
      else slot.worker.unref()
    }
  }

  const finish = (slot: Slot) => {
    clearTimeout(slot.timer)
    const job = slot.job
    slot.job = undefined
    return job
  }

  const answered = (slot: Slot, message: ContentWorkerMessage) => {
    if (message._tag === "Ready") {
      slot.ready = true
      return dispatch()
    }
    const job = finish(slot)
    if (job !== undefined && job.id === message.id) {
      settle(
        job,
        message._tag === "Done"
          ? Effect.succeed(message.output)
          : message.name === "RangeError"
          ? Effect.fail(tooComplex("stack", job.deadline))
          : Effect.die(new Error(`A content worker failed on ${job.name}: ${message.name}: ${message.message}`))
      )
    }
    dispatch()
  }

  /** Terminates a worker the pool no longer uses. */
  const retire = (slot: Slot) => {
    slot.retired = true
    slots.delete(slot)
    clearTimeout(slot.timer)
    return slot.worker.terminate().catch(() => undefined)
  }

  /** A stopped worker is replaced at once, so the next job does not wait for a start-up (about a second). */
  const replace = () => {
    if (!closed) spawn()
    dispatch()
  }

  const overran = (slot: Slot) => {
    const job = finish(slot)
    stopped += 1
    stoppedByReason.deadline += 1
    void retire(slot)
    if (job !== undefined) settle(job, Effect.fail(tooComplex("deadline", job.deadline)))
    replace()
  }

  const exited = (slot: Slot) => {
    if (slot.retired) return
    slots.delete(slot)
    const job = finish(slot)
    if (job !== undefined) {
      stopped += 1
      const memory = (slot.error as { code?: unknown } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY"
      stoppedByReason[memory ? "memory" : "crashed"] += 1
      settle(job, Effect.fail(tooComplex(memory ? "memory" : "crashed", job.deadline)))
    }
    if (!slot.ready) {
      // A worker that cannot even start would fail the same way again: tell the waiting jobs, start no other now.
      const failure = new Error(`A content worker could not start: ${String(slot.error ?? "it exited")}`)
      for (const waiting of queue.splice(0)) settle(waiting, Effect.die(failure))
      return
    }
    replace()
  }

  const run = <K extends ContentJobName>(name: K, input: ContentJobInput<K>) =>
    Effect.async<ContentJobOutput<K>, ValidationError | Unavailable>((resume) => {
      if (closed || queue.length >= CONTENT_QUEUE_MAX) {
        return resume(Effect.fail(
          new Unavailable({
            message: closed
              ? "The server is shutting down"
              : "Too much content is waiting to be processed; try again shortly",
            details: { queued: queue.length }
          })
        ))
      }
      const job: Job = {
        id: nextId++,
        name,
        input,
        deadline: Duration.millis(jobDeadlineMs(deadlineMs, inputChars(input))),
        settle: (result) => resume(result as Effect.Effect<ContentJobOutput<K>, ValidationError | Unavailable>)
      }
      queue.push(job)
      dispatch()
      // An abandoned job leaves the queue; one already running finishes (within its deadline) unheard.
      return Effect.sync(() => {
        job.settle = () => {}
        const waiting = queue.indexOf(job)
        if (waiting >= 0) queue.splice(waiting, 1)
        dispatch()
      })
    })

  const stats = Effect.sync((): ContentWorkerStats => ({
    started: { ...started },
    stopped,
    stoppedByReason: { ...stoppedByReason },
    workersStarted
  }))

  const close = Effect.promise(() => {
    closed = true
    const shuttingDown = Effect.fail(new Unavailable({ message: "The server is shutting down" }))
    for (const waiting of queue.splice(0)) settle(waiting, shuttingDown)
    for (const slot of slots) {
      const running = finish(slot)
      if (running !== undefined) settle(running, shuttingDown)
    }
    return Promise.all([...slots].map(retire))
  })

  return { run, stats, close }
}

/** The pool for the server's lifetime: its workers are terminated when the layer closes. */
export const contentWorkersLayer = (options: ContentWorkerOptions) =>
  Layer.scoped(
    ContentWorkers,
    Effect.acquireRelease(Effect.sync(() => makeContentWorkers(options)), (pool) => pool.close).pipe(
      Effect.map(({ run, stats }) => ({ run, stats }))
    )
  )

/** The pool sized and bounded by Limits (DOCK_RENDER_WORKERS, DOCK_RENDER_DEADLINE). */
export const ContentWorkersLive = Layer.unwrapEffect(
  Effect.map(
    Limits,
    (limits) => contentWorkersLayer({ workers: limits.renderWorkers, deadline: limits.renderDeadline })
  )
)
