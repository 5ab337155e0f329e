import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option } from "effect"
import {
  ContentWorkers,
  contentWorkersLayer,
  jobDeadlineMs,
  makeContentWorkers
} from "../src/Content/ContentWorkers.ts"
import { ordinary } from "../src/Content/MarkdownSamples.ts"

/**
 * Issue 13's runaway inputs (one long bracket label, quadratic in micromark) parse in milliseconds with markdown-it,
 * and no input we tried runs away from it (decisions.md, "Markdown writes"). So these tests hold a worker with ordinary
 * Markdown that takes far longer to render than the short deadline they configure: ~0.6 s a MiB warm, against
 * 20–100 ms for the same MiB.
 */
const MiB = 1024 * 1024
const long = ordinary(1_000_000)

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("ContentWorkers", () => {
  it("gives a 1 MiB input the whole deadline, a smaller one proportionally less, never under the floor", () => {
    expect(jobDeadlineMs(6000, 1_048_576)).toBe(6000)
    expect(jobDeadlineMs(6000, 524_288)).toBe(3000)
    expect(jobDeadlineMs(6000, 98_304)).toBe(1000)
    expect(jobDeadlineMs(6000, 10)).toBe(1000)
    // A configured deadline under the floor is the floor (tests and operators may shorten it).
    expect(jobDeadlineMs(300, 10)).toBe(300)
    expect(jobDeadlineMs(300, 1_048_576)).toBe(300)
  })

  it.scoped("runs jobs in a worker: HTML sanitized with its text, Markdown read and rendered", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      const html = yield* workers.run("htmlPage", { html: "<p>Hi <script>alert(1)</script><b>there</b></p>" })
      expect(html.html).toBe("<p>Hi <b>there</b></p>")
      expect(html.text).toBe("Hi there")
      const markdown = yield* workers.run("markdownPage", {
        content: "---\ntitle: T\n---\n# Head\n\n[[Other]]",
        frontMatterRequired: true
      })
      expect(markdown._tag).toBe("Page")
      if (markdown._tag === "Page") {
        expect(markdown.page.fields.title).toBe("T")
        expect(markdown.page.firstHeading).toBe("Head")
        expect(markdown.page.wikilinks.map((link) => link.target)).toEqual(["Other"])
      }
      const read = yield* workers.run("renderMarkdown", {
        content: "[[Other]] and [[Gone]]",
        links: [["Other", "/a/other-1"]]
      })
      expect(read).toContain(`<a href="/a/other-1"`)
      expect(read).toContain("Gone")
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 1, deadline: Duration.seconds(30) }))))

  it.scoped("answers a refusal of the content as data (made an error class again by the caller)", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      const refused = yield* workers.run("markdownPage", { content: "no front matter", frontMatterRequired: true })
      expect(refused._tag).toBe("Refused")
      if (refused._tag === "Refused") expect(refused.refusal._tag).toBe("InvalidFrontMatter")
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 1, deadline: Duration.seconds(30) }))))

  it.scoped("a job larger than 1 MiB gets the deadline in proportion to its size, and says so", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      // ~2 MiB against a 20 ms deadline for 1 MiB: stopped after ~40 ms (rendering it takes ~1 s).
      const large = ordinary(2 * MiB)
      const exit = yield* Effect.exit(workers.run("renderMarkdown", { content: large, links: [] }))
      const error = failureOf(exit) as { _tag: string; details: { reason: string; deadline_ms: number } } | undefined
      expect(error?._tag).toBe("ValidationError")
      expect(error?.details.reason).toBe("deadline")
      expect(error?.details.deadline_ms).toBe(jobDeadlineMs(20, large.length))
      expect(error?.details.deadline_ms).toBeGreaterThanOrEqual(40)
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 1, deadline: Duration.millis(20) }))))

  it.scoped("stops a runaway job at the deadline with validation_error, and the pool goes on working", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      // Warm: the worker is started (its start-up never counts against a deadline anyway).
      yield* workers.run("sanitizeHtml", { html: "<p>warm</p>" })
      const exit = yield* Effect.exit(workers.run("renderMarkdown", { content: long, links: [] }))
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "ValidationError", details: { reason: "deadline", deadline_ms: 100 } })
      expect(error?.message).toContain("too complex to render")
      const next = yield* workers.run("htmlPage", { html: "<p>next</p>" })
      expect(next.text).toBe("next")
      const stats = yield* workers.stats
      expect(stats.stopped).toBe(1)
      expect(stats.stoppedByReason).toEqual({ deadline: 1, memory: 0, crashed: 0 })
      expect(stats.workersStarted).toBe(2) // the stopped one and its replacement
      expect(stats.started.renderMarkdown).toBe(1)
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 1, deadline: Duration.millis(100) }))))

  it.scoped("while one worker is busy with a long job, another answers the next job", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      // Both workers started (a worker's start-up takes longer than the long job itself on a loaded machine).
      yield* Effect.all([1, 2].map(() => workers.run("htmlPage", { html: "<p>warm</p>" })), { concurrency: 2 })
      expect((yield* workers.stats).workersStarted).toBe(2)
      const longJob = yield* Effect.fork(workers.run("renderMarkdown", { content: ordinary(4 * MiB), links: [] }))
      const next = yield* workers.run("htmlPage", { html: "<p>meanwhile</p>" })
      expect(next.text).toBe("meanwhile")
      expect(Option.isNone(yield* Fiber.poll(longJob))).toBe(true)
      expect(yield* Fiber.join(longJob)).toContain("<h2>")
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 2, deadline: Duration.seconds(60) }))))

  it.scoped("a job that exhausts its worker's heap is validation_error, not the end of the server", () =>
    Effect.gen(function*() {
      const workers = yield* ContentWorkers
      // 1 MiB of ordinary Markdown, rendered and sanitized, peaks well above a 64 MB heap.
      const exit = yield* Effect.exit(workers.run("renderMarkdown", { content: ordinary(1024 * 1024), links: [] }))
      expect(failureOf(exit)).toMatchObject({ _tag: "ValidationError", details: { reason: "memory" } })
      expect((yield* workers.run("htmlPage", { html: "<p>after</p>" })).text).toBe("after")
    }).pipe(Effect.provide(contentWorkersLayer({ workers: 1, deadline: Duration.seconds(60), heapMb: 64 }))))

  it.live(
    "a closed pool refuses new jobs as unavailable and fails the ones it was running",
    () =>
      Effect.gen(function*() {
        const pool = makeContentWorkers({ workers: 1, deadline: Duration.seconds(60) })
        const running = yield* Effect.fork(pool.run("renderMarkdown", { content: ordinary(4 * MiB), links: [] }))
        // The job is running once the worker has started and taken it.
        while ((yield* pool.stats).started.renderMarkdown === 0) yield* Effect.sleep("10 millis")
        yield* pool.close
        expect(failureOf(yield* running.await)).toMatchObject({ _tag: "Unavailable" })
        expect(failureOf(yield* Effect.exit(pool.run("htmlPage", { html: "x" })))).toMatchObject({
          _tag: "Unavailable"
        })
      }),
    { timeout: 60_000 }
  )
})
