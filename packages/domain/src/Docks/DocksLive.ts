/** The Docks rules: validation, slug choice, the plan cap, permission checks and attribution. */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { transactional } from "../Database/Transactional.ts"
import { BadRequest, Forbidden, NotFound, TierLimitExceeded, Unauthorized, ValidationError } from "../Errors.ts"
import { DockId, type UserId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import { authorOf } from "../Parts/PartRow.ts"
import { Parts } from "../Parts/Parts.ts"
import {
  canRead,
  checkCreateDock,
  checkDeleteDock,
  checkOwner,
  checkPublish,
  checkSandboxExposure,
  type DockAccess,
  roleOf
} from "../Policy.ts"
import { CurrentPrincipal, type Principal } from "../Principal.ts"
import { PublicBaseUrl } from "../Settings.ts"
import { slugify, validateSlug } from "../Slug.ts"
import { spanned, traced } from "../Spans.ts"
import { WriteRules } from "../WriteRules.ts"
import {
  ActivityItem,
  DESCRIPTION_MAX,
  DockDetails,
  type DockRef,
  dockRefOf,
  type DockRow,
  type DockTarget,
  dockUrl,
  type NewDock,
  TAG_MAX,
  TAGS_MAX,
  targetRefs,
  TITLE_MAX,
  toDock
} from "./Dock.ts"
import { makeDockDetailsRepo } from "./DockDetailsRepo.ts"
import {
  type Along,
  type DockListFilter,
  type DockPatch,
  Docks,
  type ForkOptions,
  LIST_MAX,
  type MetadataPatch,
  type OwnedDock,
  type ResolvedDock,
  type WritableFilter
} from "./Docks.ts"
import { type AlongFrom, type DocksRepo, type DockWithGrant, makeDocksRepo } from "./DocksRepo.ts"

/** A resolved Dock and the row it came from (fields only this layer's rules read). */
interface Found {
  readonly row: DockRow
  readonly resolved: ResolvedDock
  /** The lookup's raw row when it read `along` beside the Dock (Docks.forReadAlong). */
  readonly along?: Readonly<Record<string, unknown>> | undefined
}

/** How long a set_grounding_bucket choice lasts without being set again. */
export const GROUNDING_TTL = Duration.hours(24)

const invalid = (field: string, message: string) => new ValidationError({ message, details: { field } })

/** The title from `title` or its alias `name`; errors name `field`, the parameter the caller used. */
const normalizeTitle = (input: NewDock, field = "title") =>
  Effect.gen(function*() {
    const title = [input.title, input.name].map((value) => value?.trim()).find((value) =>
      value !== undefined && value !== ""
    )
    if (title === undefined || title.length === 0) {
      return yield* invalid(field, `A Dock needs a ${field === "title" ? "title (or name)" : field}`)
    }
    if (title.length > TITLE_MAX) {
      return yield* invalid(field, `${field} is longer than ${TITLE_MAX} characters`)
    }
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

const normalizeTopics = (topics: ReadonlyArray<string>, field = "topic_tag_slugs") =>
  Effect.gen(function*() {
    const unique = [...new Set(topics.map((topic) => topic.trim().toLowerCase()))]
    if (unique.length > TAGS_MAX) return yield* invalid(field, `at most ${TAGS_MAX} topics`)
    return yield* Effect.forEach(unique, (topic) => validateSlug(field, topic))
  })

/** The wire names of the fields a patch sets, for the activity log. */
const changedFields = (patch: object, wireNames: Record<string, string> = {}) =>
  Object.entries(patch).filter(([, value]) => value !== undefined).map(([key]) => wireNames[key] ?? key)

/**
 * Inserts a Dock under the first free slug: the requested one (taken → validation_error) or one derived from
 * the title with -2, -3… appended. Runs inside the caller's transaction.
 */
const insertDock = (
  repo: DocksRepo,
  ownerId: UserId,
  fields: OwnedDock
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
    const parts = yield* Parts
    const detailsRepo = yield* makeDockDetailsRepo
    const activity = yield* Activity
    const limits = yield* Limits
    const baseUrl = yield* PublicBaseUrl
    const writeRules = yield* WriteRules

    /**
     * The one resolver's lookup, one statement for the row and the caller's grant (and what `along` reads beside
     * it): by id, by owner/slug, or a bare slug among own, collaborations, then public.
     */
    const findRow = (
      ref: DockRef,
      principal: Principal,
      along?: AlongFrom
    ): Effect.Effect<Option.Option<DockWithGrant>, BadRequest> => {
      const userId = principal.userId
      switch (ref._tag) {
        case "ByPath":
          return repo.findByPathWithGrant(userId, ref.owner.toLowerCase(), ref.slug, along)
        case "ById":
          return Schema.is(DockId)(ref.id) ? repo.findByIdWithGrant(userId, ref.id, along) : Effect.succeedNone
        case "BySlug":
          // A sandbox token weighs only its sandbox, so an ambiguity cannot reveal other users' Docks to it.
          return Effect.flatMap(
            repo.findBySlugForCaller(
              userId,
              principal.sandbox ? principal.allowedBucketIds ?? [] : null,
              ref.slug,
              along
            ),
            (matches) => {
              const best = matches.filter((match) => match.tier === matches[0]?.tier)
              if (best.length > 1) {
                return Effect.fail(
                  new BadRequest({
                    message:
                      `Several Docks you can read have the slug "${ref.slug}"; name one as owner_username/${ref.slug}`,
                    details: { candidates: best.map((match) => `${match.dock.owner_username}/${match.dock.slug}`) }
                  })
                )
              }
              return Effect.succeed(Option.fromNullable(best[0]))
            }
          )
      }
    }

    /** The plan's Docks-per-user cap, counted under a lock on the owner inside the creating transaction. */
    const reserveDockSlot = (ownerId: UserId) =>
      Effect.gen(function*() {
        const owned = yield* repo.lockAndCountOwned(ownerId)
        if (owned >= limits.planMaxDocks) {
          return yield* new TierLimitExceeded({
            message: `The free plan allows ${limits.planMaxDocks} Docks per user`,
            details: { limit: limits.planMaxDocks, used: owned }
          })
        }
      })

    /**
     * The one read rule of every lookup: the resolved Dock when the caller may read the row, else undefined.
     * The row stays beside it for this layer's own rules (fields the Dock object does not show).
     */
    const resolution = (principal: Principal, { along, dock: row, grant }: DockWithGrant): Found | undefined => {
      const access: DockAccess = { dockId: row.id, ownerId: row.owner_id, visibility: row.visibility, grant }
      if (!canRead(principal, access)) return undefined
      // A sandbox token sees its sandbox and nothing else (public Docks are readable anonymously instead).
      if (principal.sandbox && !(principal.allowedBucketIds ?? []).includes(row.id)) return undefined
      const resolved: ResolvedDock = {
        dock: toDock(row, baseUrl),
        access,
        role: roleOf(principal, access),
        sandbox: row.sandbox
      }
      return { row, resolved, along }
    }

    const notFound = () => new NotFound({ message: "Dock not found" })

    /**
     * How the operator names a Dock: its id or `owner/slug`. A bare slug is refused, since an operator acts for
     * no user whose Docks it could mean. Hidden Docks are not found.
     */
    const forOperator = traced("Docks.forOperator")(function*(name: string) {
      const ref = dockRefOf(name)
      if (ref._tag === "BySlug") {
        return yield* new ValidationError({
          message: `Name the Dock by its id or as owner/slug, not "${name}"`,
          details: { field: "dock" }
        })
      }
      const found = ref._tag === "ById"
        ? (Schema.is(DockId)(ref.id) ? yield* repo.findById(ref.id) : Option.none())
        : yield* repo.findByPath(ref.owner.toLowerCase(), ref.slug)
      if (Option.isNone(found)) return yield* new NotFound({ message: `No Dock "${name}"`, details: { field: "dock" } })
      return toDock(found.value, baseUrl)
    })

    const createOwned = (ownerId: UserId, fields: OwnedDock) => insertDock(repo, ownerId, fields)

    const storedById = (id: DockId) => Effect.map(repo.findById(id), Option.map((row) => toDock(row, baseUrl)))

    /**
     * A Dock as the caller's transaction just wrote it. Answers are read before commit: after it the Dock may
     * already be changed again, or deleted.
     */
    const writtenRow = (id: DockId) => repo.findById(id).pipe(Effect.map(Option.getOrThrow))

    /** The Dock a reference names, or not_found when it is missing or not readable. */
    const readable = (ref: DockRef, along?: AlongFrom) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const found = yield* findRow(ref, principal, along)
        const readable = Option.isSome(found) ? resolution(principal, found.value) : undefined
        if (readable === undefined) return yield* notFound()
        return readable
      })

    /** With `along`, read beside the Dock when one form names it (several forms are looked up one by one). */
    const findTarget = (target: DockTarget, along?: AlongFrom) =>
      Effect.gen(function*() {
        if (target.owner_username !== undefined && target.bucket_slug === undefined) {
          return yield* new BadRequest({
            message: "owner_username names whose Dock bucket_slug is; give bucket_slug too, or use bucket: owner/slug",
            details: { fields: ["owner_username"] }
          })
        }
        const refs = targetRefs(target)
        const found = yield* Effect.forEach(refs, (ref) => readable(ref, refs.length === 1 ? along : undefined))
        if (found.length === 0) return Option.none<Found>()
        const ids = new Set(found.map(({ row }) => row.id))
        if (ids.size > 1) {
          return yield* new BadRequest({
            message:
              "The Dock parameters name different Docks; give one of bucket, bucket_id, bucket_path or bucket_slug",
            details: { fields: Object.keys(target).filter((key) => target[key as keyof DockTarget] !== undefined) }
          })
        }
        return Option.some(found[0]!)
      })

    const namedTarget = (target: DockTarget, along?: AlongFrom) =>
      Effect.flatMap(
        findTarget(target, along),
        Option.match({
          onNone: () =>
            Effect.fail(new BadRequest({ message: "Name the Dock with `bucket` (or bucket_path / bucket_id)" })),
          onSome: Effect.succeed
        })
      )

    /**
     * The token's grounding Dock while it is set, unexpired and still readable, else the caller's default Dock
     * while it exists and is readable: both looked up in one statement.
     */
    const readFallback = (principal: Principal, along?: AlongFrom) =>
      Effect.gen(function*() {
        if (principal.tokenId === null && principal.userId === null) return undefined
        const now = new Date(yield* Clock.currentTimeMillis)
        const found = yield* repo.findReadFallbacksWithGrant(principal.userId, principal.tokenId, now, along)
        return found.map((row) => resolution(principal, row)).find((readable) => readable !== undefined)
      })

    /** The caller's default Dock while it exists and is readable (a sandbox token's: its sandbox). */
    const defaultDock = (principal: Principal) =>
      Effect.gen(function*() {
        if (principal.userId === null) return undefined
        const found = yield* repo.findDefaultWithGrant(principal.userId)
        return Option.isSome(found) ? resolution(principal, found.value) : undefined
      })

    const readTarget = (target: DockTarget, along?: AlongFrom) =>
      Effect.gen(function*() {
        const found = yield* findTarget(target, along)
        if (Option.isSome(found)) return found.value
        const principal = yield* CurrentPrincipal
        const fallback = yield* readFallback(principal, along)
        if (fallback === undefined) {
          return yield* new BadRequest({
            message: "Name the Dock with `bucket` (a Dock id, owner_username/dock_slug or slug), or set one with " +
              "set_grounding_bucket"
          })
        }
        return fallback
      })

    const writeTarget = (target: DockTarget) =>
      Effect.gen(function*() {
        const found = yield* findTarget(target)
        if (Option.isSome(found)) return found.value
        const principal = yield* CurrentPrincipal
        const fallback = yield* defaultDock(principal)
        if (fallback === undefined) {
          return yield* new NotFound({
            message: principal.userId === null
              ? "No Dock named and no default Dock"
              : "You have no default Dock: name one with `bucket`"
          })
        }
        return fallback
      })

    const byIdFound = (id: DockId) => readable({ _tag: "ById", id }).pipe(Effect.catchTag("BadRequest", notFound))

    const find = traced("Docks.find")(function*(target: DockTarget) {
      return Option.map(yield* findTarget(target), ({ resolved }) => resolved)
    })
    const named = traced("Docks.named")(function*(target: DockTarget) {
      return (yield* namedTarget(target)).resolved
    })
    const forRead = traced("Docks.forRead")(function*(target: DockTarget) {
      return (yield* readTarget(target)).resolved
    })
    /** What `along` reads beside the Dock `found` resolved to, decoded once the policy has let the caller read it. */
    const withAlong = <A>(found: Found, along: Along<A>) =>
      Effect.gen(function*() {
        // A target naming its Dock in several forms was looked up without it: read it now, by the Dock's id.
        const row = found.along ?? (yield* repo.alongOf(found.row.id, along.from))
        return { dock: found.resolved, along: yield* along.decode(row) }
      })
    const forReadAlong = <A>(target: DockTarget, along: Along<A>) =>
      Effect.flatMap(readTarget(target, along.from), (found) => withAlong(found, along)).pipe(
        spanned("Docks.forReadAlong")
      )
    const namedAlong = <A>(target: DockTarget, along: Along<A>) =>
      Effect.flatMap(namedTarget(target, along.from), (found) => withAlong(found, along)).pipe(
        spanned("Docks.namedAlong")
      )
    const forWrite = traced("Docks.forWrite")(function*(target: DockTarget) {
      return (yield* writeTarget(target)).resolved
    })
    const byId = traced("Docks.byId")(function*(id: DockId) {
      return (yield* byIdFound(id)).resolved
    })

    /**
     * What a bare slug could mean for the caller (`/b/<slug>` without an owner): the Docks of the one resolver's best
     * rank (own, else collaborations, else public), as `named({ bucket: slug })` weighs them. One is the Dock it
     * resolves to; several are the ambiguity it answers `bad_request` for; none is `not_found`.
     */
    const candidates = traced("Docks.candidates")(function*(slug: string) {
      const principal = yield* CurrentPrincipal
      const matches = yield* repo.findBySlugForCaller(
        principal.userId,
        principal.sandbox ? principal.allowedBucketIds ?? [] : null,
        slug
      )
      return matches
        .filter((match) => match.tier === matches[0]?.tier)
        .flatMap((match) => {
          const readable = resolution(principal, match)
          return readable === undefined ? [] : [readable.resolved]
        })
    })

    const readableAt = traced("Docks.readableAt")(function*(paths: ReadonlyArray<string>) {
      const principal = yield* CurrentPrincipal
      const found = new Map<string, ResolvedDock>()
      // As the one resolver reads `bucket: owner/slug`: the owner case-insensitively, the slug as written.
      const refs = paths.flatMap((path) => {
        const ref = dockRefOf(path)
        return ref._tag === "ByPath" ? [{ owner: ref.owner.toLowerCase(), slug: ref.slug }] : []
      })
      if (refs.length === 0) return found
      for (const row of yield* repo.findByPathsWithGrant(principal.userId, refs)) {
        const readable = resolution(principal, row)
        if (readable !== undefined) found.set(`${row.dock.owner_username}/${row.dock.slug}`, readable.resolved)
      }
      return found
    })

    const create = traced("Docks.create")(function*(input: NewDock) {
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
      const id = yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* reserveDockSlot(ownerId)
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
        })
      )
      const row = yield* repo.findById(id).pipe(Effect.map(Option.getOrThrow))
      return toDock(row, baseUrl)
    })

    const listWritable = traced("Docks.listWritable")(function*(filter: WritableFilter) {
      const principal = yield* CurrentPrincipal
      if (principal.userId === null) {
        return yield* new Unauthorized({ message: "Listing your Docks needs a bearer token" })
      }
      const rows = yield* repo.findWritable(principal.userId, filter.includeCollaborations ?? false)
      return rows
        .filter((row) => principal.allowedBucketIds === null || principal.allowedBucketIds.includes(row.id))
        .filter((row) => filter.visibility === undefined || row.visibility === filter.visibility)
        .filter((row) => filter.tag === undefined || row.tags.includes(filter.tag))
        .map((row) => toDock(row, baseUrl))
    })

    const update = traced("Docks.update")(function*(resolved: ResolvedDock, patch: DockPatch) {
      const principal = yield* CurrentPrincipal
      const { access, dock } = resolved
      yield* checkPublish(principal, access, { visibility: patch.visibility })
      yield* writeRules.admitWrite(principal)
      const title = patch.title === undefined ? dock.title : yield* normalizeTitle({ title: patch.title })
      const description = patch.description === undefined ? dock.description : patch.description?.trim() || null
      if (description !== null && description.length > DESCRIPTION_MAX) {
        return yield* invalid("description", `description is longer than ${DESCRIPTION_MAX} characters`)
      }
      const tags = patch.tags === undefined ? dock.tags : yield* normalizeTags(patch.tags)
      const now = new Date(yield* Clock.currentTimeMillis)
      const written = yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* repo.update(dock.id, {
            title,
            description,
            visibility: patch.visibility ?? dock.visibility,
            tags,
            now
          })
          yield* activity.record({
            dockId: dock.id,
            action: "dock.updated",
            subjectType: "dock",
            subjectId: dock.id,
            details: { fields: changedFields(patch) }
          })
          return yield* writtenRow(dock.id)
        })
      )
      return toDock(written, baseUrl)
    })

    const remove = traced("Docks.remove")(function*({ access, dock }: ResolvedDock) {
      const principal = yield* CurrentPrincipal
      yield* checkDeleteDock(principal, access)
      yield* writeRules.admitWrite(principal)
      // The owner's default Dock may go too; the user then has none until one is made the default again.
      yield* repo.remove(dock.id)
    })

    const sandboxDocks = (
      principal: { readonly sandbox: boolean; readonly allowedBucketIds: ReadonlyArray<DockId> | null }
    ) => principal.sandbox ? principal.allowedBucketIds ?? [] : null

    const search = traced("Docks.search")(function*(query: string, limit: number) {
      const principal = yield* CurrentPrincipal
      const text = query.trim()
      if (text.length === 0) return yield* invalid("query", "query must not be empty")
      const rows = yield* repo.search(principal.userId, sandboxDocks(principal), text, limit)
      return rows.map((row) => toDock(row, baseUrl))
    })

    const list = traced("Docks.list")(function*(filter: DockListFilter) {
      const principal = yield* CurrentPrincipal
      const visibility = filter.visibility ?? "all"
      const ownedByMe = filter.ownedByMe ?? false
      if (principal.userId === null && (visibility === "private" || ownedByMe)) {
        return yield* new Unauthorized({ message: "Listing your own Docks needs a bearer token" })
      }
      const rows = yield* repo.list(principal.userId, sandboxDocks(principal), { visibility, ownedByMe }, LIST_MAX)
      return rows.map((row) => toDock(row, baseUrl))
    })

    const details = traced("Docks.details")(function*(target: DockTarget) {
      const { resolved: { role }, row } = yield* readTarget(target)
      const member = role !== null
      const { activity, concepts, cover, entities, ...counts } = yield* detailsRepo.details(
        row.id,
        member,
        member ? row.member_cover_part_id : row.cover_part_id
      )
      const fork = row.forked_from_path === null || row.forked_at === null ? null : yield* Effect.gen(function*() {
        const upstream = row.forked_from_id === null
          ? undefined
          : yield* readable({ _tag: "ById", id: row.forked_from_id }).pipe(
            Effect.map(({ row }) => row),
            Effect.catchAll(() => Effect.succeed(undefined))
          )
        const tracking = upstream === undefined
          ? { changed: 0, added: 0, removed: 0 }
          : yield* detailsRepo.forkTracking(row.id, upstream.id)
        return {
          upstream: upstream === undefined ? null : {
            id: upstream.id,
            path: `${upstream.owner_username}/${upstream.slug}`,
            title: upstream.title,
            url: dockUrl(baseUrl, upstream.owner_username, upstream.slug)
          },
          upstream_path: row.forked_from_path!,
          forked_at: row.forked_at!.toISOString(),
          pages_at_fork: row.forked_page_count ?? 0,
          changed_since_fork: tracking.changed,
          added_since_fork: tracking.added,
          removed_since_fork: tracking.removed
        }
      })
      return new DockDetails({
        ...toDock(row, baseUrl),
        ...counts,
        recent_activity: activity.map((entry) =>
          new ActivityItem({
            action: entry.action,
            subject_type: entry.subject_type,
            subject_id: entry.subject_id,
            actor: { username: entry.username, agent_label: entry.agent_label },
            ...(role === "owner" ? { token_id: entry.token_id } : {}),
            created_at: entry.created_at.toISOString()
          }, true)
        ),
        top_entities: entities,
        top_concepts: concepts,
        cover_web_page: cover ?? null,
        fork
      }, true)
    })

    const fork = traced("Docks.fork")(function*(upstream: DockTarget, options: ForkOptions) {
      const principal = yield* CurrentPrincipal
      yield* checkSandboxExposure(principal, { fork: true })
      yield* checkCreateDock(principal)
      const { row: source } = yield* namedTarget(upstream)
      const path = `${source.owner_username}/${source.slug}`
      if (source.visibility !== "public") {
        return yield* new Forbidden({ message: `${path} is not public: only public Docks can be forked` })
      }
      if (!source.allow_forks) {
        return yield* new Forbidden({ message: `The owner of ${path} does not allow forks` })
      }
      yield* writeRules.admitWrite(principal)
      const title = yield* normalizeTitle({ title: options.newName ?? source.title }, "new_name")
      const ownerId = principal.userId!
      const author = authorOf(principal)
      const id = yield* transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* reserveDockSlot(ownerId)
          const id = yield* insertDock(repo, ownerId, {
            title,
            slug: undefined,
            description: source.description,
            visibility: options.visibility ?? "private",
            discoverable: false,
            allowForks: false,
            tags: source.tags,
            topics: source.topics
          })
          // A fork is never a sandbox (a sandbox token cannot fork).
          const copied = yield* parts.copyForFork(source.id, { id, sandbox: false }, ownerId, author, now)
          yield* repo.markFork(id, { id: source.id, path }, copied.pages, now)
          yield* activity.record({
            dockId: id,
            action: "dock.forked",
            subjectType: "dock",
            subjectId: id,
            details: { upstream_id: source.id, upstream_path: path, pages: copied.pages }
          })
          return id
        })
      )
      return toDock(yield* repo.findById(id).pipe(Effect.map(Option.getOrThrow)), baseUrl)
    })

    const updateMetadata = traced("Docks.updateMetadata")(function*(resolved: ResolvedDock, patch: MetadataPatch) {
      const principal = yield* CurrentPrincipal
      const { access, dock } = resolved
      yield* checkPublish(principal, access, {
        visibility: patch.visibility,
        discoverable: patch.discoverable,
        allowForks: patch.allowForks
      })
      yield* writeRules.admitWrite(principal)
      const title = patch.name === undefined ? dock.title : yield* normalizeTitle({ name: patch.name }, "name")
      const description = patch.description === undefined ? dock.description : patch.description?.trim() || null
      if (description !== null && description.length > DESCRIPTION_MAX) {
        return yield* invalid("description", `description is longer than ${DESCRIPTION_MAX} characters`)
      }
      const added = yield* normalizeTopics(patch.addTopics ?? [], "add_topics")
      const removed = new Set((patch.removeTopics ?? []).map((topic) => topic.trim().toLowerCase()))
      const topics = yield* normalizeTopics(
        [...dock.topics, ...added].filter((topic) => !removed.has(topic)),
        "add_topics"
      )
      const now = new Date(yield* Clock.currentTimeMillis)
      const written = yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* repo.updateMetadata(dock.id, {
            title,
            description,
            visibility: patch.visibility ?? dock.visibility,
            discoverable: patch.discoverable ?? dock.discoverable,
            allowForks: patch.allowForks ?? dock.allow_forks,
            topics,
            now
          })
          yield* activity.record({
            dockId: dock.id,
            action: "dock.updated",
            subjectType: "dock",
            subjectId: dock.id,
            details: {
              fields: changedFields(patch, {
                allowForks: "allow_forks",
                addTopics: "add_topics",
                removeTopics: "remove_topics"
              })
            }
          })
          return yield* writtenRow(dock.id)
        })
      )
      return toDock(written, baseUrl)
    })

    const setCover = traced("Docks.setCover")(function*(resolved: ResolvedDock, page: string) {
      const principal = yield* CurrentPrincipal
      const { access, dock } = resolved
      yield* checkOwner(principal, access)
      yield* writeRules.admitWrite(principal)
      const part = yield* parts.findInDock(dock.id, page)
      if (part === undefined || part.page_kind === "micro_db") {
        return yield* new NotFound({
          message: `No web page or Markdown file "${page}" in ${dock.owner.username}/${dock.slug}`
        })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const written = yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* repo.setCover(dock.id, part.id, now)
          yield* activity.record({
            dockId: dock.id,
            action: "dock.cover_set",
            subjectType: "page",
            subjectId: part.id,
            details: { slug: part.slug }
          })
          return yield* writtenRow(dock.id)
        })
      )
      return toDock(written, baseUrl)
    })

    const setGrounding = traced("Docks.setGrounding")(function*({ dock }: ResolvedDock) {
      const principal = yield* CurrentPrincipal
      if (principal.tokenId === null) {
        return yield* new Unauthorized({
          message: "set_grounding_bucket needs a bearer token: the choice is kept per token"
        })
      }
      yield* writeRules.admitWrite(principal)
      const now = new Date(yield* Clock.currentTimeMillis)
      const expires = new Date(now.getTime() + Duration.toMillis(GROUNDING_TTL))
      yield* repo.setGrounding(principal.tokenId, dock.id, expires, now)
      return `${dock.owner.username}/${dock.slug}`
    })

    return {
      create,
      find,
      named,
      forRead,
      forReadAlong,
      namedAlong,
      forWrite,
      byId,
      readableAt,
      candidates,
      forOperator,
      createOwned,
      storedById,
      listWritable,
      update,
      remove,
      search,
      list,
      details,
      fork,
      updateMetadata,
      setCover,
      setGrounding
    }
  })
)
