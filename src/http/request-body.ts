import type { z } from 'zod'
import { commonRunBlockBody } from '../engine/run-block-body.js'
import { RunBlockBodySchema } from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { invalidBodyMessage, zodDetails } from './errors.js'

// A request body is JSON or absent; absent reads as {} so `POST /v1/sessions` with no body works.
function parseJson(text: string): unknown {
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new VisError('http.invalid-json', `The request body is not JSON: ${(err as Error).message}`)
  }
}

function validate<S extends z.ZodTypeAny>(value: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new VisError('http.invalid-body', invalidBodyMessage(parsed.error), zodDetails(parsed.error))
  }
  return parsed.data
}

export const parseJsonBody = <S extends z.ZodTypeAny>(text: string, schema: S): z.output<S> =>
  validate(parseJson(text), schema)

// The common body by hand (src/engine/run-block-body.ts), anything else through the schema.
export { commonRunBlockBody }

export function parseRunBlockBody(text: string): z.output<typeof RunBlockBodySchema> {
  const value = parseJson(text)
  return commonRunBlockBody(value) ?? validate(value, RunBlockBodySchema)
}
