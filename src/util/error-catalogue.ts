// Every error code vis-runtime raises, in one place: its HTTP status, whether the same request
// can succeed when tried again, and what it means in a line. `VisError` accepts only these codes;
// the HTTP status (src/http/errors.ts), OpenAPI's code enum and docs/errors.md are derived from
// here, so a new code is added here first (then `npm run docs:errors` rewrites the docs page).
//
// Status conventions (test/util/error-catalogue.test.ts keeps them): `*.not-found` is 404 and
// `*.denied` 403 unless the entry says why not; what a client can fix is a 4xx; 500 is for
// failures inside the server or its machine, which no change to the request fixes.
export type ErrorCatalogueEntry = {
  readonly status: number
  readonly retryable: boolean
  readonly summary: string
}

// A request that fails this way fails again unchanged...
const fail = (status: number, summary: string): ErrorCatalogueEntry => ({ status, retryable: false, summary })
// ...or may succeed when sent again later (a busy session, a node handing over, a dropped link).
const retry = (status: number, summary: string): ErrorCatalogueEntry => ({ status, retryable: true, summary })

export const ERROR_CATALOGUE = {
  // A framework adapter (vis-runtime/ai-sdk, /openai-agents, /langchain) imported without its
  // framework installed: the frameworks are optional peers (src/adapters/peer.ts).
  'adapter.peer-missing': fail(
    500,
    'A framework adapter was imported without the framework package it needs.',
  ),
  'agent.bad-model': fail(400, 'The model is not provider/model with a provider vis-runtime knows.'),
  'agent.definition-not-found': fail(
    404,
    'No agent definition (.vis/agents, .claude/agents, ...) has that name.',
  ),
  'agent.fold-outside-turn': fail(409, 'fold_session() was called outside a running agent turn.'),
  'agent.config-invalid': fail(500, 'agent.json is not valid JSON or does not match its schema.'),
  // Why a turn failed (its error.code; src/agent/loop.ts, providers/failure.ts): never an HTTP
  // answer of their own, so the 500 is only what one would get if it escaped a route.
  'agent.empty-replies': fail(500, 'The model kept answering with nothing; the turn stopped.'),
  'agent.failed': fail(500, 'The turn failed on an unexpected error.'),
  'agent.iteration-cap': fail(500, 'The turn reached its iteration cap without an answer.'),
  'agent.model-stalled': retry(500, "The model's stream sent nothing for too long and was aborted."),
  'agent.model-stream-error': retry(500, 'The model provider reported an error in the middle of its stream.'),
  'agent.model-unreachable': retry(500, 'The model provider could not be reached.'),
  'agent.repeated-failure': fail(500, 'The same failure repeated; the turn stopped rather than loop.'),
  // sub_loop() from a block (src/agent/sub-loop.ts): raised to the block as a tool error.
  'agent.sub-loop-outside-turn': fail(409, 'sub_loop() runs only in a block of an agent turn.'),
  // 400 like agent.bad-model: the request named a model this server cannot use for it.
  'agent.model-not-allowed': fail(
    400,
    'A block (a child turn) or an HTTP client (a turn) named a model agent.json and VIS_MODEL do not configure (src/agent/child-models.ts).',
  ),
  'agent.sub-loop-depth': fail(409, 'sub_loop() children may not nest deeper than subLoops.maxDepth.'),
  'agent.sub-loop-timeout': fail(500, 'A sub_loop() child ran past its wall clock without an answer.'),
  'agent.sub-loop-cancelled': fail(
    500,
    'A sub_loop() child was cancelled (with its parent) before it answered.',
  ),
  // A turn's token/cost budget (src/agent/budget.ts), shared with its sub_loop children.
  'agent.budget-exceeded': fail(
    409,
    "The turn's token or cost budget (shared with its sub_loop children) is spent.",
  ),
  'agent.budget-unpriced': fail(
    400,
    'A cost budget applies but the model has no price in agent.json to count it.',
  ),
  'agent.sub-loop-failed': fail(500, 'A sub_loop() child turn ended without an answer.'),
  'agent.no-api-key': fail(400, "The model's provider has no API key configured."),
  'agent.no-model': fail(400, 'No model is configured for the agent (VIS_MODEL or agent.json).'),
  'agent.unknown-template': fail(400, 'No prompt template has that name.'),
  'agent.template-unreadable': fail(
    422,
    'The prompt template is a symbolic link, FIFO or other non-regular file inside a session root, or too large; it was not read.',
  ),

  'approval.not-found': fail(404, 'The session has no approval with that id.'),
  'approval.settled': fail(409, 'The approval was already approved, denied or cancelled.'),

  // Named in the note of a block that made more attachments than one block keeps
  // (src/engine/attachment-budget.ts MAX_BLOCK_ATTACHMENTS): the first ones were kept.
  'attachment.block-count-limit': fail(
    413,
    'A block made more attachments than one block keeps (1000); the first 1000 were kept, the rest were not stored.',
  ),
  'attachment.not-found': fail(404, 'The session has no attachment with that id.'),
  // Raised in the guest (vis_guest/attach.py AttachmentTooLarge), as the Python exception's `code`.
  'attachment.too-large': fail(
    413,
    "A block's vis_attach/vis_attach_bytes attachments (and figures) exceed the 6 MiB one block result carries; the outbox takes larger files.",
  ),
  // Named in the note of an outbox file the engine did not keep (src/engine/outbox-files.ts): past
  // the files or bytes one block's outbox may hand over, or a file handed over twice.
  'attachment.outbox-limit': fail(
    413,
    "A block's outbox files exceed what one block may hand over (100 files, 64 MiB in all by apparent size, each file once); the files past the bound were not read or kept.",
  ),

  // Named in the note of a block whose attachments the engine did not keep
  // (src/engine/attachment-budget.ts): they would take the stored attachments of the session's
  // family (its top session and every sub_loop child under it) past maxSessionAttachmentsMb.
  'attachment.session-limit': fail(
    413,
    "A block's attachments would take the stored attachments of its session's family (the top session and every sub_loop child under it, counted together) past the engine's maxSessionAttachmentsMb (default 512 MiB, by the bytes stored); none of the block's attachments were kept.",
  ),

  'bench.batteries': fail(500, 'The batteries benchmark found no CPython to stage its baseline from.'),

  'block.abandoned': fail(500, 'The block never finished: its node or worker went away while it ran.'),
  'block.not-found': fail(404, 'The session has no block with that id.'),
  'block.not-queued': fail(409, 'Only a queued block can be cancelled; this one has started or finished.'),

  'boundary.not-json': fail(500, 'A value cannot cross between the host and Python (not JSON-like).'),

  'bundle.manifest': fail(500, "The bundle's archive manifest is missing or invalid."),
  'bundle.npm': fail(500, 'npm pack or npm install failed while making a bundle.'),
  'bundle.out': fail(500, "The bundle's output directory is not empty."),
  'bundle.package': fail(500, 'The package tarball for a bundle is unreadable or incomplete.'),
  'bundle.python': fail(500, 'A bundle cannot include that Python (unsupported, missing or too large).'),
  'bundle.usage': fail(500, '`vis bundle` was given invalid arguments.'),

  'cli.bad-draft-command': fail(500, 'A draft command in the agent CLI is malformed.'),
  'cli.bad-option': fail(500, 'A command-line option has an invalid value.'),
  'cli.missing-argument': fail(500, 'A command is missing a required argument.'),
  'cli.session-mode-mismatch': fail(
    409,
    'vis run/chat --session named a stored session of another mode than --read-only/--review/--mode asked for; a session keeps its mode.',
  ),

  'cluster.bad-option': fail(500, 'The cluster options are invalid.'),
  'cluster.needs-postgres': fail(500, 'Cluster mode needs the shared PostgreSQL store (VIS_DATABASE_URL).'),
  'cluster.not-owner': retry(503, 'Another node owns the session; retry the request.'),
  'cluster.owner-failed': retry(502, 'The node that owns the session failed while answering; retry.'),
  'cluster.owner-unreachable': retry(
    503,
    'The node that owns the session cannot be reached and still holds its lease.',
  ),

  'confine.addon-missing': fail(500, 'The confinement addon (vis_confine.node) is not built.'),
  'confine.command': fail(500, 'The sandboxed command is not an absolute path.'),
  'confine.egress-forwarder': fail(500, "The sandbox's network forwarder could not listen."),
  'confine.env-forbidden': fail(500, 'An environment variable may not be passed into a sandbox.'),
  // The host cannot open files beneath a directory safely: the machine's to fix, hence 503.
  'confine.openat2-missing': fail(
    503,
    'The kernel lacks openat2(2), needed to open files beneath a root safely.',
  ),
  'confine.path-missing': fail(400, 'A path the sandbox should mount does not exist.'),
  'confine.seccomp': fail(500, 'The seccomp filter could not be installed.'),
  'confine.seccomp-unverified': fail(500, 'A thread of the worker runs without the seccomp filter.'),
  'confine.tmpdir-in-root': fail(
    409,
    "The host's temporary directory lies inside a root of a live session, which could rewrite what its jails use.",
  ),
  'confine.unavailable': fail(500, 'The sandbox cannot be built on this machine (a needed part is missing).'),

  'db.attachment-not-found': fail(500, 'The database has no attachment with that id.'),
  'db.blob-corrupt': fail(500, 'An attachment file does not match its checksum.'),
  'db.blob-missing': fail(500, 'An attachment file is missing from the blob store.'),
  'db.blob-uri': fail(500, 'Not a blob store URI.'),
  'db.blob-write': fail(500, 'An attachment could not be written to the blob store.'),
  'db.block-exists': fail(500, 'A block with that id already exists.'),
  'db.block-finished': fail(500, 'The block has already finished.'),
  'db.block-not-found': fail(500, 'The database has no block with that id.'),
  'db.closed': fail(500, 'The database connection is closed.'),
  'db.connection-lost': retry(500, 'The connection to PostgreSQL was lost.'),
  'db.driver-missing': fail(500, "SQLite's native driver (better-sqlite3) is not installed."),
  'db.idempotency-conflict': fail(409, 'The idempotency key was already used in the session.'),
  'db.invalid-input': fail(400, 'A value stored in the database failed validation.'),
  'db.iteration-not-found': fail(500, 'The turn has no iteration with that id.'),
  'db.kv-too-large': fail(500, "An extension's stored value is over the size limit."),
  'db.migration-failed': fail(
    500,
    'A database migration failed; the database stayed at its previous version.',
  ),
  'db.open-failed': fail(500, 'The database could not be opened.'),
  'db.query-failed': fail(500, 'PostgreSQL refused a query.'),
  'db.schema-newer': fail(500, 'The database was written by a newer vis-runtime.'),
  'db.session-exists': fail(409, 'A session with that id already exists in the database.'),
  'db.session-not-found': fail(500, 'The database has no session with that id.'),
  'db.turn-finished': fail(500, 'The turn has already finished.'),
  'db.turn-not-found': fail(500, 'The database has no turn with that id.'),
  'db.unsupported-url': fail(500, 'VIS_DATABASE_URL is not a postgres:// URL.'),
  'db.wal-unavailable': fail(500, 'The database cannot use write-ahead logging on this filesystem.'),

  'dist.archive': fail(500, 'A CPython archive is corrupt or holds another version than its manifest says.'),
  'dist.checksum': fail(500, "A downloaded CPython archive does not match its manifest's checksum."),
  'dist.download': retry(500, 'A download failed or ran past its deadline.'),
  'dist.env': fail(500, 'A distribution environment variable is invalid.'),
  'dist.invalid': fail(500, 'A directory is not a usable CPython distribution.'),
  'dist.manifest': fail(500, 'A distribution manifest is missing or invalid.'),
  // No CPython for the server's minor (not staged, cached or downloadable): the operator's to fix
  // (`vis runtime fetch`), not a missing resource as the *.not-found convention would say.
  'dist.not-found': fail(
    503,
    "No CPython is available for the server's Python minor (run `vis runtime fetch`).",
  ),
  'dist.packages': fail(500, 'Packages for the distribution could not be resolved or installed.'),
  'dist.platform': fail(500, 'This platform or architecture is not supported.'),
  'dist.pytest': fail(500, "CPython's test suite could not be fetched or run."),
  // A file:// VIS_PYTHON_DIST_URL kit inside a root a sandbox can write (src/distribution/local-source.ts):
  // the machine's set-up, not the request, is what to change.
  'dist.source-in-root': fail(
    500,
    'A CPython archive, file:// kit or wheel directory lies inside a session root a sandbox can write; the host does not read it.',
  ),
  // A local CPython `vis runtime stage` would run and copy lies where a sandbox can write (a session
  // rooted at HOME holds ~/.pyenv): the machine's set-up, not a request, is what to change.
  'dist.python-in-root': fail(
    500,
    'A local CPython found for staging lies inside a place a sandbox can write; the host does not run or copy it.',
  ),
  'dist.stage': fail(500, 'Staging a CPython distribution failed or was given conflicting options.'),
  'dist.tool': fail(500, 'An external tool used to build a distribution failed or is missing.'),
  'dist.version': fail(500, 'Not a supported Python version.'),
  // A wheel for `vis runtime stage --with` holds sitecustomize/usercustomize (src/distribution/packages/wheels.ts):
  // code site.py runs at every start of the staged interpreter; the stage is refused, naming the wheel.
  'dist.wheel-startup-hook': fail(
    500,
    'A wheel installs a sitecustomize or usercustomize module, which Python runs at every start; it is not staged.',
  ),
  'dist.wheels': fail(500, 'Wheels could not be installed into the distribution.'),

  'draft.apply-failed': fail(
    409,
    'A file could not be landed in the real root; the rest of the apply was rolled back or reported.',
  ),
  // The draft (or its real root) changed under a diff or an apply: nothing was read through a
  // swapped-in link; the client retries once the blocks that write it are done.
  'draft.changed': retry(
    409,
    'The draft or its real root changed during the read; retry once the blocks that write it finish.',
  ),
  // A sub_loop() child of a session in a draft works in that draft (src/drafts/drafts.ts lend).
  'draft.child-root-inside': fail(
    409,
    "A child session's root lies inside its parent's drafted root, where it would see the real files.",
  ),
  'draft.lent': fail(409, "The session works in its parent session's draft; only the parent can change it."),
  'draft.conflict': fail(409, 'Files changed in the real root since the draft began.'),
  'draft.exists': fail(409, 'The session is already in a draft.'),
  'draft.invalid': fail(400, 'The draft request is invalid.'),
  'draft.mount': fail(500, "The draft's overlay could not be mounted."),
  'draft.no-root': fail(400, 'The session has no root to draft.'),
  'draft.none': fail(409, 'The session is on the trunk: there is no draft.'),
  'draft.not-found': fail(404, 'No draft has that id.'),
  'draft.path-unsupported': fail(400, "A path has a character the draft's overlay cannot express."),
  'draft.path-too-long': fail(
    409,
    "The draft holds a path past the system's limit; it cannot be diffed or applied.",
  ),
  'draft.read-only': fail(500, 'Drafts change only through the engine that owns the session.'),
  'draft.root-missing': fail(409, "The draft's real root cannot be opened."),
  'draft.unconfined': fail(400, 'Drafts need the jail; this runtime runs unconfined.'),

  'engine.closed': retry(503, 'The engine is shutting down.'),
  'engine.home-in-use': fail(500, 'Another vis engine is using the vis home.'),

  'ext.bad-state-call': fail(500, 'A trusted extension made a malformed state call.'),
  'ext.ctx-failed': fail(500, "An extension's ctx hook failed."),
  // A root inside an extension directory: the policy asked for cannot be jailed safely.
  'ext.dirs-exposed': fail(400, "A session's roots would expose an extension directory to the sandbox."),
  'ext.gone': fail(500, 'The extension is no longer loaded.'),
  'ext.source-writable': fail(
    409,
    "An entry of the vis home's extensions folder leads where a sandbox can write (a link into a session's root); it was not loaded.",
  ),
  'ext.hook-failed': fail(500, "An extension's before- or after-hook failed."),
  'ext.hook-not-approved': fail(
    403,
    "An extension's hook on a host tool would run outside the sandbox in a read-only or review session without a person's approval; the call was refused.",
  ),
  'ext.host-call': fail(500, 'A trusted extension called a host function it may not call.'),
  'ext.no-command': fail(500, 'The extension has no slash command of that name.'),
  'ext.no-state': fail(500, 'The extension has no state store available.'),
  'ext.not-found': fail(404, 'No extension has that name.'),
  // A project's .vis/extensions is loaded only once a person trusted its exact content
  // (src/extensions/trust.ts, `vis ext trust`); also a folder that cannot be trusted as it is.
  'ext.project-untrusted': fail(
    409,
    "The project's extensions are not trusted as they are now (new or changed since); review them and run `vis ext trust`.",
  ),
  'ext.refused': fail(500, "An extension's hook refused the tool call."),
  'ext.tool-failed': fail(500, "An extension's tool failed."),

  'guest.bad-symbol': fail(500, 'A symbol has no characters a Python name can use.'),

  'home.unwritable': fail(500, 'The vis home cannot be written.'),
  // A home made or opened inside a root of a running session's jail, which does not mask it
  // (src/util/home-guard.ts): that sandbox could plant what the host runs from the home.
  'home.file-writable': fail(
    409,
    "A configuration file of the vis home (mcp.json, agent.json, trust/projects.json) leads where a sandbox can write (a link into a session's root); it was not read.",
  ),
  'home.inside-live-session-root': fail(
    409,
    'The vis home lies inside a root of a running session that can write it; stop that session or choose a VIS_HOME outside its roots.',
  ),

  'host.no-handler': fail(500, 'No host call handler is installed in the runtime.'),

  'http.bad-option': fail(500, 'A server option has an invalid value.'),
  'http.bad-trusted-proxy': fail(500, 'A trusted proxy is not an IP address or CIDR range.'),
  // Slow or hostile clients (src/http/request-bodies.ts, connection-caps.ts).
  'http.body-timeout': retry(408, 'The request body did not arrive in time.'),
  'http.body-too-large': fail(413, 'The request body is over the size limit.'),
  'http.host-not-allowed': fail(421, 'The server does not answer to that Host header.'),
  'http.internal': fail(500, 'An unexpected error in the server (a bug).'),
  'http.invalid-body': fail(400, 'The request body does not match the schema.'),
  'http.invalid-header': fail(400, 'A request header is invalid.'),
  'http.invalid-json': fail(400, 'The request body is not JSON.'),
  'http.invalid-query': fail(400, 'A query parameter is invalid.'),
  'http.listen': fail(500, 'The server cannot listen on the host and port.'),
  'http.method-not-allowed': fail(405, 'The route does not take that method.'),
  'http.not-found': fail(404, 'No route matches the path.'),
  'http.origin-not-allowed': fail(403, "Requests from the page's origin are refused."),
  'http.token-required': fail(500, 'A non-loopback bind needs VIS_TOKEN.'),
  'http.token-weak': fail(500, 'VIS_TOKEN is too short.'),
  'http.too-many-connections': retry(503, 'The server is at its connection limit; retry after Retry-After.'),
  'http.too-many-peer-connections': retry(
    503,
    'The client is at its per-peer connection limit; retry after Retry-After.',
  ),
  'http.unauthorized': fail(401, 'The bearer token is missing or wrong.'),
  'http.unsupported-media-type': fail(415, 'The request body is not sent as application/json.'),

  'idempotency.key-reused': fail(422, 'The Idempotency-Key was used for a different request.'),

  'mcp.call-failed': fail(500, 'An MCP server tool call failed.'),
  'mcp.config': fail(500, 'The MCP configuration is invalid.'),
  // A stdio server's command is not installed outside the session roots (mcp.json is the operator's).
  'mcp.command-missing': fail(500, 'An MCP server command is not on PATH outside the session roots.'),
  'mcp.connect-failed': retry(500, 'An MCP server could not be reached.'),
  'mcp.connect-timeout': retry(500, 'An MCP server did not start in time.'),
  'mcp.home-in-use': fail(500, 'Another engine uses the vis home; use its /mcp endpoint instead.'),
  // A stdio server's command or cwd lies in a session root, where a sandbox could plant code; or a
  // running server's does, in a root opened since it started (it is stopped before the call).
  'mcp.launch-denied': fail(
    403,
    "An MCP server would start from inside a session root, or an mcp.json env variable (whatever its name) names a path in one (or a running server's, in a root opened since it started: it is stopped); vis refuses.",
  ),
  'mcp.invalid-cursor': fail(400, 'A resources/list cursor the server did not give; list again without one.'),
  // /mcp at its bound of live MCP sessions with none idle to close (src/mcp/server/transport-http.ts).
  'mcp.client-sessions-full': retry(
    429,
    'This MCP client keeps as many live sessions as it may and every one is running a block; reuse or reset one.',
  ),
  'mcp.sessions-full': retry(
    503,
    'The server holds as many MCP sessions as it keeps and all are busy; initialize again after Retry-After.',
  ),
  'mcp.resource-not-found': fail(500, "No MCP resource has that URI among the client's sessions."),
  // resources/read of an attachment whose answer would pass what one answer may carry (the /mcp
  // event stream's bound); the message names the HTTP URL that serves it whole
  // (src/mcp/server/resources.ts).
  'mcp.resource-too-large': fail(
    413,
    'The attachment is too large for one resources/read answer; fetch it whole from the HTTP attachment URL the message names.',
  ),
  // resources/read (of any resource: an attachment, a transcript page) while the server's resource
  // reads hold all they may and as many wait (src/mcp/server/read-gate.ts).
  'mcp.resource-busy': retry(
    503,
    'The server is reading as many resources as it may at once; read again later.',
  ),
  'mcp.timeout': retry(500, 'An MCP server did not answer in time.'),
  'mcp.tool-error': fail(500, 'An MCP server tool reported an error.'),
  'mcp.unknown-server': fail(500, 'No MCP server has that name.'),

  'native.addon-missing': fail(500, 'A native addon is not built for this Python.'),
  'native.already-loaded': fail(500, 'A Python interpreter is already loaded in this process.'),
  'native.bad-home': fail(500, 'The distribution cannot be used as the Python home.'),
  'native.bad-outcome': fail(500, 'The native runtime returned an unreadable job outcome.'),
  'native.closed': fail(500, 'The Python runtime is closed.'),
  'native.host-cancelled': fail(500, 'The host call was cancelled.'),
  'native.init-exit': fail(500, 'Python start-up ended with an exit status.'),
  'native.init-failed': fail(500, 'Python failed to initialise.'),
  'native.load-failed': fail(500, 'libpython could not be loaded.'),
  'native.no-audit': fail(500, 'The runtime was loaded without the audit hook.'),
  'native.policy-loosen': fail(500, 'The native policy can only be tightened.'),
  'native.version-mismatch': fail(500, 'The native addon was built for another Python.'),
  'native.wire': fail(500, 'Wire mode is already on.'),

  // Every session view and list entry carries the policy whole (session-lifecycle.ts MAX_POLICY_BYTES).
  'policy.too-large': fail(
    400,
    "The session's policy is past 1 MiB of JSON (its network rules' paths, its roots): give fewer.",
  ),
  // The root's path names another directory than at the session's creation (root-guard.ts).
  'policy.root-changed': fail(409, 'A root is no longer the directory it was when the session was created.'),
  // The host keeps its jails' shared files in its temp directory (util/host-state-dirs.ts);
  // so does every other live vis process of the user, in its own.
  'policy.root-holds-host-tmp': fail(
    400,
    'A root is, or contains, the temporary directory of this host or of another live vis process of the user.',
  ),
  'policy.root-in-runtime': fail(
    400,
    'A root lies inside the vis-runtime package or a CPython the host runs.',
  ),
  // A `.vis` folder holds what runs on the host (a project's extensions): never a root (root-guard.ts).
  'policy.root-in-vis-folder': fail(400, 'A root is, or lies inside, a .vis folder.'),
  'policy.audit-unexpressible': fail(
    400,
    "An unjailed runtime's audit hook cannot express the session's network policy.",
  ),
  // Roots that would expose the server (src/confinement/root-guard.ts), lie outside the operator's
  // allow-list, or that the jail cannot mount: said before (or instead of) a worker dying on them.
  'policy.root-not-allowed': fail(400, 'A root lies outside the directories this server lets clients open.'),
  'policy.root-not-directory': fail(400, 'A root is not a directory.'),
  'policy.root-pseudo-fs': fail(400, 'A root is a kernel pseudo-filesystem.'),
  'policy.root-too-broad': fail(400, 'A root is "/" or resolves to it.'),
  'policy.root-unreadable': fail(400, 'A root cannot be read.'),
  'policy.root-vis-home': fail(400, 'A root lies inside the vis home.'),

  'project.layout-failed': fail(500, "The project's layout could not be read."),

  'protocol.closed': fail(500, 'The channel to the peer is closed.'),
  'protocol.frame-too-large': fail(500, 'A frame is over the size cap.'),
  'protocol.invalid': fail(500, 'The peer sent a malformed message.'),
  'protocol.unencodable': fail(500, 'A reply value could not be encoded for the wire.'),
  'protocol.unknown-op': fail(500, 'The peer does not know the operation asked of it.'),
  'protocol.too-deep': fail(500, 'A message nests too deeply.'),
  'protocol.unknown-error': fail(500, 'The peer answered with an error code the host does not know.'),

  'python.exception': fail(500, 'Python raised an exception.'),
  'python.interrupted': fail(500, 'Python was interrupted.'),

  'runtime.closed': fail(503, 'The runtime is closed.'),

  'session.busy': retry(409, 'Another block is running in the session.'),
  'session.closed': fail(409, 'The session is closed.'),
  // Past the session's disk budget: the client frees space in the roots first (SECURITY.md).
  'session.disk-budget': fail(409, "The session's roots are over their disk budget; free space first."),
  // Several processes on one home (src/engine/ownership.ts).
  'session.owned-elsewhere': fail(
    409,
    'Another vis process on this home runs the session; send its blocks there.',
  ),
  'session.owner-unreachable': retry(503, 'The vis process that runs the session did not answer.'),
  'session.owner-request': fail(400, 'A request to a session owner lacked its op or session id.'),
  'session.owner-peer-refused': fail(403, 'The owner socket refused a sandboxed process.'),
  'session.owner-failed': fail(500, 'The vis process that runs the session failed to carry out the request.'),
  'session.disposed': fail(500, 'The session was disposed.'),
  'session.exists': fail(409, 'A session with that id already exists.'),
  'session.jail-refused': fail(400, "The jail could not be built for the session's roots."),
  'session.no-block': fail(500, 'No block is running in the session.'),
  'session.not-found': fail(404, 'No session has that id.'),

  'skill.not-found': fail(404, 'No skill (.vis/skills, .claude/skills, ...) has that name.'),
  'skill.folder-changed': fail(
    409,
    "A skill folder outside the roots is no longer the folder it was when the session's worker found it.",
  ),
  'skill.folder-vis-home': fail(400, 'A skill folder outside the roots is or contains a vis home.'),

  'tool.aborted': fail(500, 'The tool call was cancelled.'),
  'tool.anchor-stale': fail(500, 'A patch anchor no longer matches its line.'),
  'tool.approval-cancelled': fail(500, "The tool call's approval was cancelled."),
  'tool.approval-unavailable': fail(
    500,
    'The tool needs approval and nothing in the session can ask for it.',
  ),
  'tool.bad-args': fail(500, 'The tool was called with invalid arguments.'),
  'tool.bad-name': fail(500, 'The tool name is not a Python identifier.'),
  'tool.bad-glob': fail(
    400,
    "grep's include glob is too long or malformed (an unclosed '{' or a bad class), or the include list has too many globs or characters in all.",
  ),
  'tool.binary': fail(500, 'The file is not text.'),
  'tool.denied': fail(403, 'The tool call was denied.'),
  'tool.entry': fail(500, "A tool's entry point failed."),
  'tool.exists': fail(500, 'The destination already exists.'),
  'tool.grammar-incompatible': fail(
    500,
    "The language's grammar package does not load in the installed web-tree-sitter; install the versions package.json pins.",
  ),
  'tool.hard-linked': fail(
    500,
    'The file has other hard links; changing it could change files outside the roots.',
  ),
  'tool.index-failed': fail(500, 'The structural index could not parse the file.'),
  'tool.index-timeout': fail(500, 'The structural index ran past its time bound.'),
  'tool.io': fail(500, 'A file operation failed.'),
  'tool.is-directory': fail(500, 'The path is a directory.'),
  'tool.match-ambiguous': fail(500, 'The patch search text occurs more than once.'),
  'tool.no-grammar': fail(
    500,
    "The grammar package for the file's language (or web-tree-sitter) is not installed; the message names the package.",
  ),
  'tool.no-match': fail(500, 'The patch search text was not found.'),
  'tool.no-python': fail(500, 'No Python interpreter is available to check syntax.'),
  'tool.no-roots': fail(500, 'The session has no roots to work in.'),
  'tool.not-a-directory': fail(500, 'A path component is not a directory.'),
  'tool.not-a-file': fail(500, 'The path is not a regular file.'),
  'tool.not-empty': fail(500, 'The directory is not empty.'),
  'tool.not-found': fail(404, 'The path or item does not exist.'),
  'tool.not-running': fail(500, 'The background shell has exited.'),
  'tool.path-denied': fail(403, "The path is outside the session's roots."),
  'tool.path-loop': fail(500, 'The path has a symlink loop or a symlink where none may be.'),
  'tool.permission': fail(500, 'Permission denied.'),
  // A host file tool asked to change code the host runs inside a root: the vis-runtime package,
  // its hoisted dependencies, a CPython distribution, VIS_ADDON_DIR, or a project's .vis folder
  // (src/tools/fs/paths.ts).
  'tool.read-only-path': fail(
    403,
    "The path is inside code the host runs (the vis-runtime package or its dependencies, a CPython distribution) or a root's .vis folder, which sessions may not change.",
  ),
  'tool.resource-exists': fail(500, 'A resource with that id already exists.'),
  'tool.session-closed': fail(500, 'The session is closed; it starts nothing new.'),
  'tool.session-read-only': fail(
    403,
    'The root is read-only in this session (mode read-only, or outside a review draft); nothing was changed.',
  ),
  'tool.spawn': fail(500, 'A tool process could not start.'),
  'tool.search-too-costly': fail(
    400,
    "patch's whitespace-tolerant search ran past its work bound, or the file is too large for it; give the text as the file has it, a more specific search, or anchors.",
  ),
  'tool.syntax': fail(500, 'The edit would leave the file unparseable.'),
  'tool.too-large': fail(500, 'The file is over the size limit.'),
  'tool.too-many-calls': retry(500, 'Too many tool calls are running or waiting in the session.'),
  'tool.unbound': fail(500, 'No tool of that name is bound in the session.'),

  'tool.unsupported-language': fail(500, 'The structural index has no grammar for this kind of file.'),
  'turn.abandoned': fail(500, 'The turn never finished: its engine stopped while it ran.'),
  'turn.cancelled': fail(500, 'The turn was cancelled.'),
  'turn.conflict': fail(409, 'The turn belongs to another session.'),
  'turn.not-found': fail(404, 'The session has no turn with that id.'),

  'worker.closed': fail(500, 'The worker was closed.'),
  'worker.died': fail(500, 'The worker process died.'),
  'worker.interrupted': fail(500, 'The block was interrupted.'),
  'worker.network-loosen': fail(500, "A session's network can only be tightened."),
  'worker.not-confined': fail(500, 'The worker has no policy yet to tighten.'),
  'worker.options': fail(500, 'A worker option is invalid.'),
  'worker.protocol': fail(500, 'The worker broke the protocol and was retired.'),
  'worker.python': fail(500, 'The worker could not load Python.'),
  'worker.retired': fail(409, "The session's worker was retired; close the session and create a new one."),
  'worker.spawn': fail(500, 'A worker process could not start.'),
  'worker.stdin-closed': fail(500, "The block's stdin is closed."),
  'worker.stdin-full': retry(500, "The block's stdin buffer is full."),
} satisfies Record<string, ErrorCatalogueEntry>

// Codes with a number in them, one entry for the whole family: the model provider's HTTP status
// is part of the code (agent.model-http-429), kept as the agent has always reported it.
export const ERROR_FAMILIES = {
  'agent.model-http-<status>': {
    pattern: /^agent\.model-http-[1-5]\d\d$/,
    ...fail(500, 'The model provider answered with this HTTP status; 408, 409, 429 and 5xx are retried.'),
  },
} satisfies Record<string, ErrorCatalogueEntry & { pattern: RegExp }>

type FixedErrorCode = keyof typeof ERROR_CATALOGUE
export type ErrorCode = FixedErrorCode | `agent.model-http-${number}`

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE).sort() as [FixedErrorCode, ...FixedErrorCode[]]

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && catalogueEntry(code) !== undefined
}

// The entry a code is described by: its own, or its family's.
export function catalogueEntry(code: string): ErrorCatalogueEntry | undefined {
  if (Object.hasOwn(ERROR_CATALOGUE, code)) return ERROR_CATALOGUE[code as FixedErrorCode]
  return Object.values(ERROR_FAMILIES).find((f) => f.pattern.test(code))
}
