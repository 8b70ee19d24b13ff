import { z } from 'zod'
import {
  ApplyOptionsSchema,
  ApplyResultSchema,
  DraftDiffSchema,
  DraftLabelSchema,
  DraftStateSchema,
} from '../drafts/drafts.js'
import { err } from './errors.js'
import { type RouteSpec, readBody } from './routes.js'

export const CreateDraftBodySchema = z
  .object({
    label: DraftLabelSchema.describe('A name for the draft, shown wherever the session is.'),
    blank: z.boolean().default(false).describe('Start the draft empty instead of as a copy of the root.'),
  })
  .strict()
export const AbandonDraftBodySchema = z
  .object({ why: z.string().max(2000).optional().describe('Why it was abandoned; recorded.') })
  .strict()

const NOT_FOUND = err('No such session.')
const INVALID = err('Invalid body.')

// /v1/sessions/{id}/draft: a session's draft (src/drafts). Mounted by routes.ts.
export const DRAFT_ROUTES: RouteSpec[] = [
  {
    method: 'get',
    path: '/v1/sessions/:id/draft',
    operationId: 'getDraft',
    summary: 'Whether the session works on its trunk or in a draft (label, base time, files changed).',
    responses: { 200: { description: 'The draft state.', schema: DraftStateSchema }, 404: NOT_FOUND },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      engine.sessionView(id)
      return c.json(await engine.drafts.state(id))
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/draft',
    operationId: 'createDraft',
    summary:
      "Start a draft: the session's primary root becomes an isolated copy (an overlay; the real directory is untouched) " +
      'for every later block and tool. Runs after the blocks already queued.',
    body: CreateDraftBodySchema,
    responses: {
      201: { description: 'The session is in the new draft.', schema: DraftStateSchema },
      400: INVALID,
      404: NOT_FOUND,
      409: err('The session is already in a draft, or is closed.'),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const body = await readBody(c, CreateDraftBodySchema)
      engine.sessionView(id)
      return c.json(await engine.drafts.create(id, body.label, body.blank ? 'blank' : 'copy'), 201)
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/draft/diff',
    operationId: 'getDraftDiff',
    summary: 'The draft as a unified diff against the real root, with the list of changed files.',
    responses: {
      200: { description: 'The changes.', schema: DraftDiffSchema },
      404: NOT_FOUND,
      409: err(
        'A file of the draft changed while it was read (draft.changed): nothing was read through it; ask again.',
      ),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      engine.sessionView(id)
      return c.json(await engine.drafts.diff(id))
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/draft/apply',
    operationId: 'applyDraft',
    summary:
      'Land the draft in the real root (each file atomically) and leave it. Refused with the conflicting files when the ' +
      'real root changed or deleted them since the draft began, unless `theirs` (keep the real files) or `ours` (the draft wins). ' +
      'With `expect` (the `digest` of the diff that was reviewed) it lands only that: draft.changed (409) when the draft moved since.',
    body: ApplyOptionsSchema,
    // Every field is optional: no body is the defaults.
    bodyOptional: true,
    responses: {
      200: {
        description: 'What landed (status noop: the session was on its trunk).',
        schema: ApplyResultSchema,
      },
      400: INVALID,
      404: NOT_FOUND,
      409: err(
        'Conflicts (details.context.conflicts lists them); the draft or the real root changed under the landing ' +
          '(draft.changed, draft.apply-failed: details.context.landed lists what had landed); or the session is closed.',
      ),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const body = await readBody(c, ApplyOptionsSchema)
      engine.sessionView(id)
      return c.json(await engine.drafts.apply(id, body))
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/draft/abandon',
    operationId: 'abandonDraft',
    summary: 'Discard the draft and return to the trunk; the reason is recorded.',
    body: AbandonDraftBodySchema,
    bodyOptional: true,
    responses: {
      200: { description: 'The session is on its trunk.', schema: DraftStateSchema },
      400: INVALID,
      404: NOT_FOUND,
      409: err('The session has no draft, or is closed.'),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const body = await readBody(c, AbandonDraftBodySchema)
      engine.sessionView(id)
      return c.json(await engine.drafts.abandon(id, body.why))
    },
  },
]
