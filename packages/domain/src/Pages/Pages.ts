/**
 * The Pages port: the store every page write goes through once its content is prepared (sanitized HTML,
 * parsed Markdown, a Micro DB snapshot). Creates or updates one page by slug, with a new version for every
 * change of content, attribution, the content caps and the activity log, all in one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { Docks } from "../Docks/Docks.ts"
import {
  type BadRequest,
  NotFound,
  type PermissionDenied,
  type RateLimited,
  type TierLimitExceeded,
  type Unauthorized,
  type ValidationError
} from "../Errors.ts"
import type { DockId } from "../Ids.ts"
import { PublicBaseUrl } from "../Limits.ts"
import { checkWrite } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { WriteRules } from "../Sandbox/WriteRules.ts"
import { slugify, validateSlug } from "../Slug.ts"
import { makePagesRepo, type PartFields, type PartRow } from "./PagesRepo.ts"
import { type PageContent, Part, type SaveAction } from "./Part.ts"

export class Pages extends Context.Tag("@dock/domain/Pages")<Pages, {
  /** Creates the page with this slug in the Dock, or updates it (`unchanged` when nothing differs). */
  readonly save: (
    dockId: DockId,
    content: PageContent
  ) => Effect.Effect<
    { readonly part: Part; readonly action: SaveAction },
    NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | TierLimitExceeded | RateLimited,
    CurrentPrincipal
  >
  /** A page of a Dock the caller can read, by UUID or slug. */
  readonly find: (dockId: DockId, ref: string) => Effect.Effect<Part, NotFound | BadRequest, CurrentPrincipal>
}>() {}

export const toPart = (row: PartRow, baseUrl: string, withContent = false): Part =>
  new Part({
    id: row.id,
    bucket_id: row.dock_id,
    slug: row.slug,
    public_slug: row.public_slug,
    url: `${baseUrl}/a/${row.public_slug}`,
    title: row.title,
    summary: row.summary,
    content_type: row.content_type,
    page_kind: row.page_kind,
    version: row.version,
    last_updated: row.updated_at.toISOString(),
    claim_count: row.claim_count,
    ...(withContent ? { content: row.content } : {})
  })

/** A public slug: the page slug plus a random suffix, unique across the service and never changed. */
export const newPublicSlug = (slug: string) =>
  `${slug.slice(0, 48)}-${crypto.getRandomValues(new Uint32Array(2)).reduce((text, n) => text + n.toString(36), "")}`

export const PagesLive = Layer.effect(
  Pages,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makePagesRepo
    const docks = yield* Docks
    const activity = yield* Activity
    const writeRules = yield* WriteRules
    const baseUrl = yield* PublicBaseUrl

    const save = Effect.fn("Pages.save")(function*(dockId: DockId, input: PageContent) {
      const principal = yield* CurrentPrincipal
      const access = yield* docks.access({ _tag: "ById", id: dockId })
      yield* checkWrite(principal, access)
      yield* writeRules.admitWrite(principal)
      const slug = input.slug !== undefined
        ? yield* validateSlug("page_slug", input.slug)
        : slugify(input.title ?? "", 56) || "untitled"
      const fields: PartFields = {
        slug,
        title: input.title?.trim() || null,
        summary: input.summary,
        contentType: input.contentType,
        pageKind: input.pageKind,
        content: input.content,
        bodyText: input.bodyText,
        frontMatter: input.frontMatter ?? {},
        tags: input.tags ?? [],
        entities: input.entities ?? [],
        concepts: input.concepts ?? [],
        sourceIds: input.sourceIds ?? [],
        links: input.links ?? [],
        claimCount: input.claimCount ?? 0,
        sizeBytes: new TextEncoder().encode(input.content).byteLength
      }
      const author = { userId: principal.userId, tokenId: principal.tokenId, agentLabel: principal.agentLabel }
      const { action, id } = yield* sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        // Writers of one Dock take turns, so two pushes of a new slug cannot both create it.
        yield* sql`select id from docks where id = ${dockId} for no key update`.pipe(Effect.orDie)
        const existing = yield* repo.findInDock(dockId, slug, true)
        if (existing === undefined) {
          yield* writeRules.reserveContent(dockId, { artifacts: 1, bytes: fields.sizeBytes })
          const id = yield* repo.insert(dockId, principal.userId!, newPublicSlug(slug), fields, now)
          yield* repo.insertVersion(id, 1, fields, author, "created", now)
          yield* activity.record({ dockId, action: "page.created", subjectType: "page", subjectId: id, details: { slug } })
          return { action: "created" as const, id }
        }
        if (
          existing.content === fields.content && existing.title === fields.title &&
          existing.content_type === fields.contentType && existing.summary === fields.summary
        ) {
          return { action: "unchanged" as const, id: existing.id }
        }
        yield* writeRules.reserveContent(dockId, { artifacts: 0, bytes: fields.sizeBytes - existing.size_bytes })
        const version = existing.version + 1
        yield* repo.update(existing.id, version, fields, now)
        yield* repo.insertVersion(existing.id, version, fields, author, "updated", now)
        yield* activity.record({
          dockId,
          action: "page.updated",
          subjectType: "page",
          subjectId: existing.id,
          details: { slug, version }
        })
        return { action: "updated" as const, id: existing.id }
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      const row = yield* repo.findInDock(dockId, id)
      return { part: toPart(row!, baseUrl), action }
    })

    const find = Effect.fn("Pages.find")(function*(dockId: DockId, ref: string) {
      yield* docks.access({ _tag: "ById", id: dockId })
      const row = yield* repo.findInDock(dockId, ref)
      if (row === undefined) return yield* new NotFound({ message: `No page "${ref}" in this Dock` })
      return toPart(row, baseUrl)
    })

    return { save, find }
  })
)
