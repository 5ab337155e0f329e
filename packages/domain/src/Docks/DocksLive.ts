/** The Docks rules: validation, slug choice, the plan cap, permission checks and attribution. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { WriteRules } from "../Sandbox/WriteRules.ts"
import { BadRequest, NotFound, TierLimitExceeded, Unauthorized, ValidationError } from "../Errors.ts"
import { DockId, type UserId } from "../Ids.ts"
import { Limits, PublicBaseUrl } from "../Limits.ts"
import { canRead, checkCreateDock, checkOwner, type DockAccess } from "../Policy.ts"
import { checkSandboxExposure } from "../Sandbox/WriteRules.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { slugify, validateSlug } from "../Slug.ts"
import {
  DESCRIPTION_MAX,
  Dock,
  DockOwner,
  type DockRef,
  type DockTarget,
  type NewDock,
  targetRefs,
  TAG_MAX,
  TAGS_MAX,
  TITLE_MAX
} from "./Dock.ts"
import { type DockPatch, Docks, type WritableFilter } from "./Docks.ts"
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

    /** The one resolver's lookup: by id, by owner/slug, or a bare slug among own, collaborations, then public. */
    const findRow = (ref: DockRef, userId: UserId | null) => {
      switch (ref._tag) {
        case "ByPath":
          return repo.findByPath(ref.owner.toLowerCase(), ref.slug)
        case "ById":
          return Schema.is(DockId)(ref.id) ? repo.findById(ref.id) : Effect.succeedNone
        case "BySlug":
          return Effect.flatMap(repo.findBySlugForCaller(userId, ref.slug), (matches) => {
            const best = matches.filter((match) => match.tier === matches[0]?.tier)
            if (best.length > 1) {
              return Effect.fail(
                new BadRequest({
                  message: `Several Docks you can read have the slug "${ref.slug}"; name one as owner_username/${ref.slug}`,
                  details: { candidates: best.map((match) => `${match.dock.owner_username}/${match.dock.slug}`) }
                })
              )
            }
            return Effect.succeed(Option.fromNullable(best[0]?.dock))
          })
      }
    }

    /** The row and the caller's access, or not_found when it is missing or not readable. */
    const readable = (ref: DockRef) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const row = yield* findRow(ref, principal.userId).pipe(
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

    const resolve = Effect.fn("Docks.resolve")(function*(target: DockTarget) {
      const found = yield* Effect.forEach(targetRefs(target), readable)
      if (found.length === 0) return Option.none()
      const ids = new Set(found.map(({ row }) => row.id))
      if (ids.size > 1) {
        return yield* new BadRequest({
          message: "The Dock parameters name different Docks; give one of bucket, bucket_id, bucket_path or bucket_slug",
          details: { fields: Object.keys(target).filter((key) => target[key as keyof DockTarget] !== undefined) }
        })
      }
      const { access, row } = found[0]!
      return Option.some({ dock: toDock(row, baseUrl), access })
    })

    const listWritable = Effect.fn("Docks.listWritable")(function*(filter: WritableFilter) {
      const principal = yield* CurrentPrincipal
      if (principal.userId === null) return yield* new Unauthorized({ message: "Listing your Docks needs a bearer token" })
      const rows = yield* repo.findWritable(principal.userId, filter.includeCollaborations ?? false)
      return rows
        .filter((row) => principal.allowedBucketIds === null || principal.allowedBucketIds.includes(row.id))
        .filter((row) => filter.visibility === undefined || row.visibility === filter.visibility)
        .filter((row) => filter.tag === undefined || row.tags.includes(filter.tag))
        .map((row) => toDock(row, baseUrl))
    })

    const update = Effect.fn("Docks.update")(function*(ref: DockRef, patch: DockPatch) {
      const principal = yield* CurrentPrincipal
      const { access, row } = yield* readable(ref)
      yield* checkOwner(principal, access)
      yield* checkSandboxExposure(principal, { visibility: patch.visibility })
      yield* writeRules.admitWrite(principal)
      const title = patch.title === undefined ? row.title : yield* normalizeTitle({ title: patch.title })
      const description = patch.description === undefined ? row.description : patch.description?.trim() || null
      if (description !== null && description.length > DESCRIPTION_MAX) {
        return yield* invalid("description", `description is longer than ${DESCRIPTION_MAX} characters`)
      }
      const tags = patch.tags === undefined ? row.tags : yield* normalizeTags(patch.tags)
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* repo.update(row.id, { title, description, visibility: patch.visibility ?? row.visibility, tags, now })
        yield* activity.record({
          dockId: row.id,
          action: "dock.updated",
          subjectType: "dock",
          subjectId: row.id,
          details: { fields: Object.keys(patch).filter((key) => patch[key as keyof DockPatch] !== undefined) }
        })
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      return toDock(yield* repo.findById(row.id).pipe(Effect.map(Option.getOrThrow)), baseUrl)
    })

    const remove = Effect.fn("Docks.remove")(function*(ref: DockRef) {
      const principal = yield* CurrentPrincipal
      const { access, row } = yield* readable(ref)
      yield* checkOwner(principal, access)
      yield* writeRules.admitWrite(principal)
      // The owner's default Dock may go too; the user then has none until one is made the default again.
      yield* repo.remove(row.id)
    })

    return { create, get, access, resolve, listWritable, update, remove }
  })
)
