/** `dock sources`: add a file's text to a Dock, list and archive sources (admin API). */
import { mediaTypeForFileName, type Source, SOURCE_CONTENT_MAX_BYTES } from "@dock/domain/api"
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Effect, Option } from "effect"
import { adminCommand, adminRequest, connection, present } from "../ApiCommand.ts"
import { CliFailure } from "../CliFailure.ts"
import { dockOption } from "./Options.ts"

const sourceLine = (source: Source) =>
  `${source.source_id}  ${source.title}  ${source.media_type}  ${source.size_bytes} bytes  from ${source.origin}` +
  `  (Dock ${source.bucket_id}, added ${source.created_at})${source.archived ? "  ARCHIVED" : ""}`

const failure = (message: string) => new CliFailure({ message })

/**
 * What `dock sources add` sends for FILE: its text (UTF-8, at most the server's limit, checked before reading
 * it all), its media type from the extension unless given, and its file name as the origin unless given.
 */
const sourceFile = (file: string, mediaType: Option.Option<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const name = path.basename(file)
    const type = Option.getOrUndefined(mediaType) ?? mediaTypeForFileName(name)
    if (type === undefined) {
      return yield* failure(
        `Cannot tell the media type of ${name} from its extension (.txt, .md, .markdown, .html, .htm); pass --media-type`
      )
    }
    const info = yield* fs.stat(file).pipe(Effect.mapError(() => failure(`Cannot read ${file}: no such file`)))
    if (info.type !== "File") return yield* failure(`Cannot read ${file}: not a file`)
    if (Number(info.size) > SOURCE_CONTENT_MAX_BYTES) {
      return yield* failure(`${file} is ${info.size} bytes; a source is at most ${SOURCE_CONTENT_MAX_BYTES} (5 MiB)`)
    }
    const bytes = yield* fs.readFile(file).pipe(
      Effect.mapError((error) => failure(`Cannot read ${file}: ${error.message}`))
    )
    const content = yield* Effect.try({
      try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
      catch: () => failure(`${file} is not UTF-8 text`)
    })
    return { name, mediaType: type, content }
  })

// The file is read (and refused) before the connection is resolved, so this one command runs the admin request
// itself rather than through adminCommand.
const add = Command.make(
  "add",
  {
    dock: dockOption,
    file: Args.text({ name: "file" }).pipe(
      Args.withDescription("A .txt, .md/.markdown or .html/.htm file (UTF-8, at most 5 MiB)")
    ),
    title: Options.text("title").pipe(
      Options.withDescription("Title (default: the Markdown front matter's title, else the file name)"),
      Options.optional
    ),
    origin: Options.text("origin").pipe(
      Options.withDescription("Where it came from: a file name or URL (default: the file's name)"),
      Options.optional
    ),
    mediaType: Options.text("media-type").pipe(
      Options.withDescription("text/plain, text/markdown or text/html (default: from the file's extension)"),
      Options.optional
    ),
    ...connection
  },
  (options) =>
    Effect.flatMap(sourceFile(options.file, options.mediaType), (file) =>
      adminRequest(options, {
        call: (client) =>
          client.adminSources.add({
            payload: {
              dock: options.dock,
              origin: Option.getOrElse(options.origin, () => file.name),
              media_type: file.mediaType,
              content: file.content,
              ...present("title", options.title)
            }
          }),
        human: (source) => `Added ${sourceLine(source)}`
      }))
).pipe(Command.withDescription("Add a source to a Dock: the text of a plain text, Markdown or HTML file"))

const list = adminCommand("list", { dock: dockOption }, (options) => ({
  call: (client) => client.adminSources.list({ urlParams: { dock: options.dock } }),
  human: (sources) => sources.length === 0 ? "No sources" : sources.map(sourceLine).join("\n")
})).pipe(Command.withDescription("List a Dock's sources, archived ones too"))

const archive = adminCommand(
  "archive",
  { id: Args.text({ name: "source-id" }).pipe(Args.withDescription("The source's id")) },
  (options) => ({
    call: (client) => client.adminSources.archive({ path: { id: options.id } }),
    human: (source) => `Archived ${sourceLine(source)}`
  })
).pipe(Command.withDescription("Archive a source: list_sources and read_source no longer show it"))

export const sources = Command.make("sources").pipe(
  Command.withDescription("Sources of Docks (admin API)"),
  Command.withSubcommands([add, list, archive])
)
