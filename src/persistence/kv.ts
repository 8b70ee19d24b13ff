import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { decodeJson, encodeJson, JsonValueSchema, parseInput } from './json.js'
import type { RepoContext } from './statements.js'

// A small durable store per trusted extension. Values are JSON and small: it is for settings and
// counters, not for files, and a size cap keeps one extension from bloating everyone's database.
export const KV_MAX_VALUE_BYTES = 1024 * 1024

const NameSchema = z.string().min(1).max(200)

const KvRowSchema = z.object({
  extension: z.string(),
  key: z.string(),
  value: z.string(),
  updated_at: z.number().int(),
})

export const KvEntrySchema = KvRowSchema.transform((r) => ({
  extension: r.extension,
  key: r.key,
  value: decodeJson(r.value),
  updatedAt: r.updated_at,
}))
export type KvEntry = z.output<typeof KvEntrySchema>

export class ExtensionKvRepo {
  constructor(private readonly ctx: RepoContext) {}

  get(extension: string, key: string): KvEntry['value'] | undefined {
    const text = this.ctx.sql
      .pluck('SELECT value FROM extension_kv WHERE extension = ? AND key = ?')
      .get(extension, key) as string | undefined
    return text === undefined ? undefined : decodeJson(text)
  }

  set(extension: string, key: string, value: unknown): void {
    parseInput(NameSchema, extension, 'kv.set extension')
    parseInput(NameSchema, key, 'kv.set key')
    const text = encodeJson(parseInput(JsonValueSchema, value, 'kv.set value'))
    const bytes = Buffer.byteLength(text)
    if (bytes > KV_MAX_VALUE_BYTES) {
      throw new VisError(
        'db.kv-too-large',
        `The value for ${extension}/${key} is ${bytes} bytes as JSON; the limit is ${KV_MAX_VALUE_BYTES}. Store large data in files.`,
        { extension, key, bytes },
      )
    }
    this.ctx.sql
      .get(
        `INSERT INTO extension_kv (extension, key, value, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (extension, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      )
      .run(extension, key, text, this.ctx.now())
  }

  delete(extension: string, key: string): boolean {
    return (
      this.ctx.sql.get('DELETE FROM extension_kv WHERE extension = ? AND key = ?').run(extension, key)
        .changes > 0
    )
  }

  list(extension: string): KvEntry[] {
    return this.ctx.sql
      .get('SELECT * FROM extension_kv WHERE extension = ? ORDER BY key')
      .all(extension)
      .map((row) => KvEntrySchema.parse(row))
  }

  clear(extension: string): number {
    return this.ctx.sql.get('DELETE FROM extension_kv WHERE extension = ?').run(extension).changes
  }
}
