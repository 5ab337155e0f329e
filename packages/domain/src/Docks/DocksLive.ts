/** The Docks rules: validation, slug choice, the plan cap, permission checks and attribution. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { WriteRules } from "../Sandbox/WriteRules.ts"
import { NotFound, TierLimitExceeded, ValidationError } from "../Errors.ts"
import { DockId, type UserId } from "../Ids.ts"
import { Limits, PublicBaseUrl } from "../Limits.ts"
import { canRead, checkCreateDock, type DockAccess } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { slugify, validateSlug } from "../Slug.ts"
import {
  DESCRIPTION_MAX,
  Dock,
  DockOwner,
  type DockRef,
  type NewDock,
  TAG_MAX,
  TAGS_MAX,
  TITLE_MAX
} from "./Dock.ts"
import { Docks } from "./Docks.ts"
import { type DockRow, makeDocksRepo, type DocksRepo } from "./DocksRepo.ts"

export const toDock = (row: DockRow, baseUrl: string): Dock =>
  new Dock({
    id: row.id,
    slug: row.slug,
    title: row.title,
    owner: new DockOwner({ id: row.owner_id, username: row.owner_username }),
    visibility: row.visibility,
    discoverable: row.discoverable,
    description: row.description,
    tags: row.tags,
    topics: row.topics,
    allow_forks: row.allow_forks,
    url: `${baseUrl}/b/${row.slug}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

const invalid = (field: string, message: string) => new ValidationError({ message, details: { field } })

const normalizeTitle = (input: NewDock) =>
  Effect.gen(function*() {
    const title = [input.title, input.name].map((value) => value?.trim()).find((value) => value !== undefined && value !== "")
    if (title === undefined || title.length === 0) return yield* invalid("title", "A Dock needs a title (or name)")
    if (title.length > TITLE_MAX) return yield* invalid("title", `title is longer than ${TITLE_MAX} characters`)
    return title
  })

const normalizeTags = (tags: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const unique = [...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag.length > 0))]
    if (unique.length > TAGS_MAX) return yield* invalid("tags", `at most ${TAGS_MAX} tags`)
    const long = unique.find((tag) => tag.length > TAG_MAX)
    if (long !== undefined) return yield* invalid("tags", `tag "${long.slice(0, 20)}…" is longer than ${TAG_MAX}`)
    return unique
  })

const normalizeTopics = (topics: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const unique = [...new Set(topics.map((topic) => topic.trim().toLowerCase()))]
    if (unique.length > TAGS_MAX) return yield* invalid("topic_tag_slugs", `at most ${TAGS_MAX} topics`)
    return yield* Effect.forEach(unique, (topic) => validateSlug("topic_tag_slugs", topic))
  })

/**
 * Inserts a Dock under the first free slug: the requested one (taken → validation_error) or one derived from
 * the title with -2, -3… appended. Runs inside the caller's transaction.
 */
export const insertDock = (
  repo: DocksRepo,
  ownerId: UserId,
  fields: {
    readonly title: string
    readonly slug: string | undefined
    readonly description: string | null
    readonly visibility: "private" | "public"
    readonly discoverable: boolean
    readonly allowForks: boolean
    readonly tags: ReadonlyArray<string>
    readonly topics: ReadonlyArray<string>
    readonly sandbox?: boolean | undefined
  }
) =>
  Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    const row = {
      owner_id: ownerId,
      title: fields.title,
      description: fields.description,
      visibility: fields.visibility,
      discoverable: fields.discoverable,
      allow_forks: fields.allowForks,
      tags: fields.tags,
      topics: fields.topics,
      sandbox: fields.sandbox,
      now
    }
    if (fields.slug !== undefined) {
      const id = yield* repo.insert({ ...row, slug: fields.slug })
      if (id === undefined) {
        return yield* new ValidationError({
          message: `You already have a Dock with the slug "${fields.slug}"`,
          details: { field: "slug", value: fields.slug }
        })
      }
      return id
    }
    const base = slugify(fields.title, 56) || "dock"
    for (let n = 1;; n++) {
      const id = yield* repo.insert({ ...row, slug: n === 1 ? base : `${base}-${n}` })
      if (id !== undefined) return id
    }
  })

export const DocksLive = Layer.effect(
  Docks,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makeDocksRepo
    const activity = yield* Activity
    const limits = yield* Limits
    const baseUrl = yield* PublicBaseUrl
    const writeRules = yield* WriteRules

    const findRow = (ref: DockRef) => {
      if (ref._tag === "ByPath") return repo.findByPath(ref.owner.toLowerCase(), ref.slug)
      return Schema.is(DockId)(ref.id) ? repo.findById(ref.id) : Effect.succeedNone
    }

    /** The row and the caller's access, or not_found when it is missing or not readable. */
    const readable = (ref: DockRef) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const row = yield* findRow(ref).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ message: "Dock not found" })),
            onSome: Effect.succeed
          }))
        )
        const grant = principal.userId === null ? null : yield* repo.grantOf(row.id, principal.userId)
        const access: DockAccess = { dockId: row.id, ownerId: row.owner_id, visibility: row.visibility, grant }
        if (!canRead(principal, access)) return yield* new NotFound({ message: "Dock not found" })
        return { row, access }
      })

    const create = Effect.fn("Docks.create")(function*(input: NewDock) {
      const principal = yield* CurrentPrincipal
      yield* checkCreateDock(principal)
      yield* writeRules.admitWrite(principal)
      const ownerId = principal.userId!
      const title = yield* normalizeTitle(input)
      const slug = input.slug === undefined ? undefined : yield* validateSlug("slug", input.slug)
      const description = input.description?.trim() || null
      if (description !== null && description.length > DESCRIPTION_MAX) {
        return yield* invalid("description", `description is longer than ${DESCRIPTION_MAX} characters`)
      }
      const tags = yield* normalizeTags(input.tags ?? [])
      const topics = yield* normalizeTopics(input.topics ?? [])
      const id = yield* sql.withTransaction(Effect.gen(function*() {
        const owned = yield* repo.lockAndCountOwned(ownerId)
        if (owned >= limits.planMaxDocks) {
          return yield* new TierLimitExceeded({
            message: `The free plan allows ${limits.planMaxDocks} Docks per user`,
            details: { limit: limits.planMaxDocks, used: owned }
          })
        }
        const id = yield* insertDock(repo, ownerId, {
          title,
          slug,
          description,
          visibility: input.visibility ?? "private",
          discoverable: input.discoverable ?? false,
          allowForks: input.allowForks ?? false,
          tags,
          topics
        })
        yield* activity.record({ dockId: id, action: "dock.created", subjectType: "dock", subjectId: id })
        return id
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      const row = yield* repo.findById(id).pipe(Effect.map(Option.getOrThrow))
      return toDock(row, baseUrl)
    })

    const get = Effect.fn("Docks.get")(function*(ref: DockRef) {
      const { row } = yield* readable(ref)
      return toDock(row, baseUrl)
    })

    const access = Effect.fn("Docks.access")(function*(ref: DockRef) {
      return (yield* readable(ref)).access
    })

    return { create, get, access }
  })
)
