// Checks a real HTTP answer against what the live OpenAPI document declares for its operation:
// the status is listed, the Content-Type is one the document names, and the body validates
// against the declared JSON Schema (2020-12, as OpenAPI 3.1 says) — errors against `Error`, with a
// stable dotted code. Written from the document alone, as a client author would read it.
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

export type Answer = {
  status: number
  contentType: string | null
  text: string
  // By lower-case name (node:http's IncomingHttpHeaders); checked when given.
  headers?: Record<string, string | string[] | undefined>
}

type Response = {
  $ref?: string
  content?: Record<string, { schema?: unknown }>
  headers?: Record<string, { required?: boolean }>
}
type Op = { responses: Record<string, Response> }

const pointerEscape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')
const baseType = (t: string) => t.split(';')[0]!.trim().toLowerCase()

// `image/png` is covered by `*/*` and `image/*` as well as by itself.
const mediaMatches = (declared: string, actual: string) => {
  if (declared === '*/*') return true
  if (declared.endsWith('/*')) return actual.startsWith(declared.slice(0, -1))
  return declared === actual
}

export function openApiChecker(doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
  // The whole document as one schema resource: `#/components/schemas/X` refs resolve inside it.
  ajv.addSchema({ ...doc, $id: 'vis-openapi' })
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const validate = (pointer: string, value: unknown): string | undefined => {
    let v = validators.get(pointer)
    if (!v) {
      v = ajv.compile({ $ref: `vis-openapi#${pointer}` })
      validators.set(pointer, v)
    }
    return v(value) ? undefined : ajv.errorsText(v.errors, { dataVar: 'body' })
  }

  // What is wrong with this answer for `method path` (path as the document spells it), or [].
  function problems(method: string, path: string, a: Answer): string[] {
    const op: Op | undefined = doc.paths[path]?.[method.toLowerCase()]
    if (!op) return [`${method} ${path} is not in the document`]
    const key = String(a.status) in op.responses ? String(a.status) : 'default'
    let response = op.responses[key]
    let pointer = `/paths/${pointerEscape(path)}/${method.toLowerCase()}/responses/${key}`
    if (!response) return [`${a.status} is not declared for ${method} ${path}`]
    if (response.$ref) {
      pointer = response.$ref.slice(1)
      response = doc.components.responses[response.$ref.split('/').at(-1)!]
    }
    const missing = Object.entries(response!.headers ?? {})
      .filter(([name, h]) => h.required && a.headers && a.headers[name.toLowerCase()] === undefined)
      .map(([name]) => `the ${a.status} lacks its declared header ${name}`)
    if (missing.length > 0) return missing
    const content = response!.content
    if (!content) return a.text === '' ? [] : [`${a.status} declares no body, got ${a.text.slice(0, 200)}`]
    const actual = baseType(a.contentType ?? '')
    const declared = Object.keys(content).find((t) => mediaMatches(baseType(t), actual))
    if (!declared) return [`Content-Type ${a.contentType} is not among ${Object.keys(content).join(', ')}`]
    const schemaPointer = `${pointer}/content/${pointerEscape(declared)}/schema`
    const out: string[] = []
    if (actual === 'application/json') {
      let body: unknown
      try {
        body = JSON.parse(a.text)
      } catch {
        return [`the body is not JSON: ${a.text.slice(0, 200)}`]
      }
      const bad = validate(schemaPointer, body)
      if (bad) out.push(`the body does not match the schema: ${bad}: ${a.text.slice(0, 300)}`)
      if (a.status >= 400) {
        const code = (body as { error?: { code?: unknown } }).error?.code
        if (typeof code !== 'string' || !/^[a-z]+(\.[a-z0-9-]+)+$/.test(code))
          out.push(`unstable code ${code}`)
      }
    } else if (actual === 'text/event-stream') {
      // Each frame's data is one of the declared frames.
      for (const frame of a.text.split('\n\n')) {
        const data = frame
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
        if (data.length === 0) continue
        const bad = validate(schemaPointer, JSON.parse(data.join('\n')))
        if (bad) out.push(`an event frame does not match the schema: ${bad}: ${frame.slice(0, 300)}`)
      }
    }
    return out
  }
  return { problems }
}
