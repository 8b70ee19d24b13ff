import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { judgeWord, refusal } from './judge-word.js'

// mcp.json `env` variables that would make a stdio server (run on the host, unconfined) load code or
// configuration from a folder a sandbox writes. No list of names can be complete: npm alone reads its
// global prefix from npm_config_prefix, PREFIX and DESTDIR, and every runtime has its own load path
// (PYTHONPATH, NODE_PATH, NODE_OPTIONS=--require, LD_PRELOAD, PERL5LIB, RUBYLIB, CLASSPATH, GOPATH,
// UV_*, PIP_*, BASH_ENV...). So the rule is by shape: a variable whose name looks like a code or
// configuration location and whose value names a path inside a writable root is refused. A data
// folder a server should serve (a filesystem server on the project) goes through `args`, which the
// server reads as data. PATH is not judged here: its in-root entries are passed over (launch.ts).

// Words in a name that mark a place a program loads from or reads settings in, and the prefixes of
// the tools that read every variable of theirs as such (matched case-insensitively).
// Also the words of variables that name a program a tool runs or a file it sources (GIT_SSH,
// SSH_ASKPASS, EDITOR, PAGER, LESSOPEN, CHROME_BIN, PHPRC, IRBRC, LUA_INIT, TS_NODE_PROJECT,
// MAVEN_OPTS, GUNICORN_CMD_ARGS, SERVER_SCRIPT: the thirteenth outsider pass's list). A data folder
// given by such a name is refused too: it goes in `args`.
// And (fourteenth outsider pass) CONF (OPENSSL_CONF: an openssl.cnf loads provider modules, Node
// reads it at start-up), the programs a tool runs by such a variable (GIT_EXTERNAL_DIFF, VISUAL,
// BROWSER, LESSCLOSE, CC, CXX, MAKE, RUSTC, RUSTC_WRAPPER, TS_NODE_COMPILER), the flags a compiler
// or linker takes (CFLAGS, LDFLAGS, RUSTFLAGS: -B, -fplugin=, -L name code), a file a library reads as
// configuration or trust (HOSTALIASES, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE), a socket whose daemon
// runs what it is told (DOCKER_HOST=unix://...) and a data folder a library unpickles (NLTK_DATA).
// And (fifteenth outsider pass) every name whose value says where a server or peer is reached: a
// socket, or a folder of sockets, in a root is a daemon the sandbox runs, which answers what the host
// asks (and receives its secrets: libpq sends PGPASSWORD to the socket in PGHOST's folder) or is run
// by the client itself (libdbus's `unixexec:path=` transport execs its program). So HOST (PGHOST,
// CONTAINER_HOST, OLLAMA_HOST, BUILDKIT_HOST), ADDR/ADDRESS (DBUS_SESSION_BUS_ADDRESS, VAULT_ADDR,
// PGHOSTADDR, AT_SPI_BUS_ADDRESS), UNIX (MYSQL_UNIX_PORT), SERVER (PULSE_SERVER, CUPS_SERVER), REMOTE
// (NIX_REMOTE, PIPEWIRE_REMOTE), ENDPOINT (CONTAINER_RUNTIME_ENDPOINT, ETCDCTL_ENDPOINTS), URL and URI
// (DATABASE_URL=postgresql:///db?host=/W/pg, MONGODB_URI=mongodb://%2FW%2Fm.sock), PROXY, DISPLAY
// (WAYLAND_DISPLAY may be a socket's path), TMUX and NVIM (a server's socket), and the prefixes DBUS_
// and PULSE_; the secrets of such tools (PGPASSWORD, MYSQL_PWD) stay unjudged: no word of theirs is
// here. Also the words of other files and programs tools read from a name: INI (ODBCINI and
// odbcinst.ini name driver .so files), PROFILE (R_PROFILE_USER), RUNTIME (VIMRUNTIME), TERMINFO,
// CREDENTIAL (GOOGLE_APPLICATION_CREDENTIALS), AUTHORITY (XAUTHORITY), REGISTRY (GST_REGISTRY), VENDOR
// (OCL_ICD_VENDORS), INPUT (TEXINPUTS), EXE (CONDA_EXE), CMD, RSH (RSYNC_RSH, CVS_RSH), PROG
// (RSYNC_CONNECT_PROG), KRB5 (KRB5CCNAME), MAILCAP (its entries are commands), LOCALE
// (LOCALE_ARCHIVE), TMP and TEMP (TMPDIR, TMUX_TMPDIR: where tmux, ssh-agent and build tools make
// their sockets and the scripts they then run), AGENT (GPG_AGENT_INFO), and the prefixes ANSIBLE_ (its
// inventory scripts run), GPG_ and GNUPG.
const LOCATION_WORDS =
  /PATH|PREFIX|HOME|LIB|DIR|FOLDER|ROOT|OPTIONS|OPTS?$|_OPTS|ARGS|CONF|FILE|PRELOAD|STARTUP|CACHE|ENV|INCLUDE|PLUGIN|COMMAND|SHELL|EXE|SSH|ASKPASS|EDITOR|PAGER|LESS|BIN$|_BIN|RC$|INIT|PROJECT|SCRIPT|MODULE|HOOK|LOADER|REQUIRE|IMPORT|DIFF|VISUAL|BROWSER|^(CC|CXX|CPP|LD|AR|AS|FC|MAKE)$|MAKE|FLAGS|RUSTC|WRAPPER|COMPILER|PYTHON|ALIASES|BUNDLE|CERT|DATA|SOCK|HOST|ADDR|UNIX|SERVER|REMOTE|ENDPOINT|URL|URI|PROXY|DISPLAY|TMUX|NVIM|INI|PROFILE|RUNTIME|TERMINFO|CREDENTIAL|AUTHORITY|REGISTRY|VENDOR|INPUT|CMD|RSH|PROG|KRB5|MAILCAP|LOCALE|TMP|TEMP|AGENT/i
const TOOL_PREFIXES =
  /^(npm_config_|YARN_|PNPM_|COREPACK_|PIP_|PIPX_|UV_|PYTHON|NODE_|LD_|GEM_|BUNDLE_|CARGO_|RUSTUP_|GO|DENO_|BUN_|PERL|RUBY|JAVA|JDK_|XDG_|OPENSSL_|SSL_|GIT_|DOCKER_|NLTK_|DBUS_|PULSE_|ANSIBLE_|GPG_|GNUPG)/i

export const isLocationName = (name: string): boolean => LOCATION_WORDS.test(name) || TOOL_PREFIXES.test(name)

// Throws `refuse(why)` for the first mcp.json env variable that names a code or configuration
// location a sandbox writes, by any reading of its value (env-spellings.ts; `vars` is the env the
// server gets, for its variables and ~): inside a writable root (judged by the path as written, its real path
// and its parent's, so a link in a root is the root's wherever it leads), or in a vis home's outbox
// or draft. Runs at every start: roots open after start-up.
export function checkServerEnv(
  server: string,
  env: Record<string, string>,
  cwd: string,
  home: string,
  refuse: (why: string) => Error,
  places: WritablePlaces = writablePlaces(),
  vars: Record<string, string | undefined> = { ...process.env, ...env },
): void {
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PATH' || !isLocationName(name)) continue
    // The shared judgement of a word (judge-word.ts), which args go through too.
    const verdict = judgeWord(value, [cwd], home, places, vars)
    if (verdict !== undefined)
      throw refuse(
        refusal(
          server,
          `env.${name}`,
          '',
          name,
          verdict,
          `a variable named like ${name} makes the server or its tools (npx, uvx, pip, python, node) load code ` +
            'or configuration, run a program or talk to a socket from there',
          `point ${name} in mcp.json at a folder outside every root, or leave it out (a data folder for the ` +
            'server to serve goes in "args")',
        ),
      )
  }
}
