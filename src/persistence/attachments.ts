import { closeSync } from 'node:fs'
import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { type BlobStore, sha256Hex } from './blob-store.js'
import { newId } from './ids.js'
import { parseInput } from './json.js'
import type { RepoContext } from './statements.js'

// Attachment metadata; the bytes are fetched separately with read().
const AttachmentRowSchema = z.object({
  id: z.string(),
  block_id: z.string(),
  position: z.number().int(),
  media_type: z.string(),
  name: z.string().nullable(),
  size: z.number().int(),
  sha256: z.string(),
  storage_uri: z.string().nullable(),
  created_at: z.number().int(),
})

export const AttachmentSchema = AttachmentRowSchema.transform((r) => ({
  id: r.id,
  blockId: r.block_id,
  position: r.position,
  mediaType: r.media_type,
  name: r.name,
  size: r.size,
  sha256: r.sha256,
  storage: r.storage_uri === null ? ('inline' as const) : ('file' as const),
  storageUri: r.storage_uri,
  createdAt: r.created_at,
}))
export type Attachment = z.output<typeof AttachmentSchema>

export const AttachmentInputSchema = z.object({
  mediaType: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\w.+-]+\/[\w.+-]+/, 'must be a media type like image/png'),
  name: z.string().max(1000).nullable().optional(),
  data: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'must be bytes (a Uint8Array or Buffer)'),
})
export type AttachmentInput = z.input<typeof AttachmentInputSchema>

const META_COLUMNS = 'id, block_id, position, media_type, name, size, sha256, storage_uri, created_at'
// The same columns read through the alias `a` of a join with blocks.
const A_META_COLUMNS = META_COLUMNS.split(', ')
  .map((c) => `a.${c}`)
  .join(', ')

// An attachment ready to insert: big non-image bytes already rest in the blob store.
export type PreparedAttachment = {
  mediaType: string
  name: string | null
  size: number
  sha256: string
  data: Buffer | null
  storageUri: string | null
}

export class AttachmentsRepo {
  constructor(
    private readonly ctx: RepoContext,
    readonly blobs: BlobStore,
    // Images stay inline whatever their size: they are what a client shows first, in one query.
    readonly inlineFloorBytes: number,
  ) {}

  // Writes the file-store part; must happen before (outside) the transaction that inserts the rows.
  prepare(inputs: readonly AttachmentInput[]): PreparedAttachment[] {
    return inputs.map((input, i) => {
      const v = parseInput(AttachmentInputSchema, input, `attachments[${i}]`)
      const bytes = Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength)
      const toFile = !v.mediaType.startsWith('image/') && bytes.byteLength > this.inlineFloorBytes
      if (toFile) {
        const { uri, sha256 } = this.blobs.put(bytes)
        return {
          mediaType: v.mediaType,
          name: v.name ?? null,
          size: bytes.byteLength,
          sha256,
          data: null,
          storageUri: uri,
        }
      }
      return {
        mediaType: v.mediaType,
        name: v.name ?? null,
        size: bytes.byteLength,
        sha256: sha256Hex(bytes),
        data: bytes,
        storageUri: null,
      }
    })
  }

  // Inserts prepared attachments after the block's existing ones; call inside a transaction.
  insertPrepared(blockId: string, prepared: readonly PreparedAttachment[]): string[] {
    const base = this.ctx.sql
      .pluck('SELECT coalesce(max(position), 0) FROM attachments WHERE block_id = ?')
      .get(blockId) as number
    const now = this.ctx.now()
    return prepared.map((p, i) => {
      const id = newId('att')
      this.ctx.sql
        .get(
          `INSERT INTO attachments (id, block_id, position, media_type, name, size, sha256, data, storage_uri, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, blockId, base + i + 1, p.mediaType, p.name, p.size, p.sha256, p.data, p.storageUri, now)
      return id
    })
  }

  add(blockId: string, inputs: readonly AttachmentInput[]): Attachment[] {
    const prepared = this.prepare(inputs)
    const ids = this.ctx.db.transaction(() => {
      if (this.ctx.sql.get('SELECT 1 FROM blocks WHERE id = ?').get(blockId) === undefined) {
        throw new VisError('db.block-not-found', `No block with id ${blockId}.`, { blockId })
      }
      return this.insertPrepared(blockId, prepared)
    })()
    return ids.map((id) => this.get(id)!)
  }

  get(id: string): Attachment | undefined {
    const row = this.ctx.sql.get(`SELECT ${META_COLUMNS} FROM attachments WHERE id = ?`).get(id)
    return row === undefined ? undefined : AttachmentSchema.parse(row)
  }

  listByBlock(blockId: string): Attachment[] {
    return this.ctx.sql
      .get(`SELECT ${META_COLUMNS} FROM attachments WHERE block_id = ? ORDER BY position`)
      .all(blockId)
      .map((row) => AttachmentSchema.parse(row))
  }

  listBySession(sessionId: string): Attachment[] {
    return this.ctx.sql
      .get(
        `SELECT ${A_META_COLUMNS}
         FROM attachments a JOIN blocks b ON b.id = a.block_id
         WHERE b.session_id = ? ORDER BY b.position, a.position`,
      )
      .all(sessionId)
      .map((row) => AttachmentSchema.parse(row))
  }

  // A session's attachments with the position of the block each belongs to: metadata only, from
  // the attachments and the blocks' positions, never a block's output (MCP resources/list).
  // `offset`/`limit`: a page of them, in that order (resources/list's cursor).
  listBySessionWithBlockPosition(
    sessionId: string,
    page: { offset: number; limit: number } = { offset: 0, limit: -1 },
  ): Array<Attachment & { blockPosition: number }> {
    return this.ctx.sql
      .get(
        `SELECT ${A_META_COLUMNS}, b.position AS block_position
         FROM attachments a JOIN blocks b ON b.id = a.block_id
         WHERE b.session_id = ? ORDER BY b.position, a.position LIMIT ? OFFSET ?`,
      )
      .all(sessionId, page.limit, page.offset)
      .map((row) => ({
        ...AttachmentSchema.parse(row),
        blockPosition: Number((row as { block_position: number | string }).block_position),
      }))
  }

  // The attachments of a session's blocks at positions lo..hi (a page of the session view): the
  // read grows with the page, not with the session's whole history.
  listByBlockPositions(sessionId: string, lo: number, hi: number): Attachment[] {
    return this.ctx.sql
      .get(
        `SELECT ${A_META_COLUMNS}
         FROM attachments a JOIN blocks b ON b.id = a.block_id
         WHERE b.session_id = ? AND b.position >= ? AND b.position <= ? ORDER BY b.position, a.position`,
      )
      .all(sessionId, lo, hi)
      .map((row) => AttachmentSchema.parse(row))
  }

  // The bytes the attachments of `sessionId`'s whole family hold (its top session and every
  // sub_loop child under it, at any depth: sessions.family_id), by their recorded sizes: what the
  // engine charges against the attachment bound (src/engine/attachment-budget.ts). Per session,
  // every child would bring a fresh allowance of its own.
  familyBytes(sessionId: string): number {
    const top =
      (this.ctx.sql.pluck('SELECT coalesce(family_id, id) FROM sessions WHERE id = ?').get(sessionId) as
        | string
        | undefined) ?? sessionId
    const total = this.ctx.sql
      .pluck(
        'SELECT coalesce(sum(a.size), 0) FROM attachments a JOIN blocks b ON b.id = a.block_id ' +
          'WHERE b.session_id IN (SELECT id FROM sessions WHERE id = ? OR family_id = ?)',
      )
      .get(top, top)
    return Number(total ?? 0)
  }

  // The bytes one session's own attachments hold (their recorded sizes).
  sessionBytes(sessionId: string): number {
    const total = this.ctx.sql
      .pluck(
        'SELECT coalesce(sum(a.size), 0) FROM attachments a JOIN blocks b ON b.id = a.block_id WHERE b.session_id = ?',
      )
      .get(sessionId)
    return Number(total ?? 0)
  }

  // The bytes, from the row or the file store, checked against the recorded size.
  read(id: string): { attachment: Attachment; data: Buffer } {
    const { row, attachment } = this.stored(id)
    const data = row.data ?? this.blobs.read(row.storage_uri!)
    this.sized(attachment, data.byteLength)
    return { attachment, data }
  }

  // The bytes for an answer that sends them piece by piece: those stored in the row, or the blob
  // store's file opened and checked (its fd, which the caller closes); sizes checked as read() does.
  open(id: string): { attachment: Attachment; data: Buffer } | { attachment: Attachment; fd: number } {
    const { row, attachment } = this.stored(id)
    if (row.data !== null) {
      this.sized(attachment, row.data.byteLength)
      return { attachment, data: row.data }
    }
    const { fd, size } = this.blobs.openChecked(row.storage_uri!)
    try {
      this.sized(attachment, size)
    } catch (err) {
      closeSync(fd)
      throw err
    }
    return { attachment, fd }
  }

  // The row's bytes or blob URI, with its metadata; not found is an error.
  private stored(id: string): {
    row: { data: Buffer | null; storage_uri: string | null }
    attachment: Attachment
  } {
    const row = this.ctx.sql.get('SELECT data, storage_uri FROM attachments WHERE id = ?').get(id) as
      | { data: Buffer | null; storage_uri: string | null }
      | undefined
    const attachment = this.get(id)
    if (!row || !attachment) {
      throw new VisError('db.attachment-not-found', `No attachment with id ${id}.`, { attachmentId: id })
    }
    return { row, attachment }
  }

  // Throws when `size` is not the recorded size.
  private sized(attachment: Attachment, size: number): void {
    if (size === attachment.size) return
    throw new VisError(
      'db.blob-corrupt',
      `Attachment ${attachment.id} has ${size} bytes, expected ${attachment.size}.`,
      {
        attachmentId: attachment.id,
      },
    )
  }

  // Removes store files no attachment row references (after session deletes, or writes whose
  // transaction never committed). Returns how many files went.
  collectGarbage(graceMs = 60 * 60 * 1000): number {
    const referenced = new Set(
      this.ctx.sql
        .pluck('SELECT DISTINCT storage_uri FROM attachments WHERE storage_uri IS NOT NULL')
        .all() as string[],
    )
    return this.blobs.sweep(referenced, graceMs, this.ctx.now())
  }
}
