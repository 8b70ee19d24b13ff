// The engine: sessions with their workers and their durable history, one API for the library
// and the HTTP server alike.
export { createEngine, Engine, type EngineOptions, type SubmittedBlock } from './engine.js'
export { type EventListener, EventLog } from './event-log.js'
export { type EngineMetrics, PROMETHEUS_CONTENT_TYPE } from './metrics.js'
export * from './schemas.js'
