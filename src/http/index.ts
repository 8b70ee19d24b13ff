// The HTTP API (Hono on @hono/node-server) over the engine.

export { toJsonSchema } from '../util/json-schema.js'
export { type AppOptions, createApp, DEFAULT_MAX_BODY_BYTES } from './app.js'
export { isLoopbackHost, requireTokenFor } from './auth.js'
export { type ErrorEnvelope, ErrorEnvelopeSchema, statusFor } from './errors.js'
export { OPENAPI_PATH, openApiDocument } from './openapi.js'
export { openApiPath, ROUTES, type RouteSpec } from './routes.js'
export { DEFAULT_HOST, DEFAULT_PORT, type ServerOptions, startServer, type VisServer } from './server.js'
