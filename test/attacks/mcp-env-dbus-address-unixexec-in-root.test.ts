// Attack (fifteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts, isLocationName).
// A variable is judged only when its name carries one of the LOCATION_WORDS or TOOL_PREFIXES.
// DBUS_SESSION_BUS_ADDRESS (and DBUS_SYSTEM_BUS_ADDRESS, DBUS_STARTER_ADDRESS) carries neither: `ADDRESS` is
// no listed word and `DBUS_` no listed prefix. Yet it is where libdbus (dbus-send, dbus-python, Qt, every
// libdbus client a server shells out to) and GDBus (notify-send, gio, secret-service clients) find the
// bus, and libdbus's `unixexec:path=<program>` transport forks and execs that program to talk to it. So a
// server configured with `"DBUS_SESSION_BUS_ADDRESS": "unixexec:path=<project>/bin/bus-bridge"` (or a
// `unix:path=<project>/...` socket the sandbox serves: a bus that answers Secret Service and notification
// calls, and receives what the server sends it) runs, on the host and unconfined, the program a block wrote
// into the root. The same value under a name the rule knows (`DBUS_SOCKET`, matched by SOCK) is refused.
//
// Reproduction: session on W; servers `control` (env DBUS_SOCKET=unixexec:path=W/bin/bus-bridge) and
// `bus` (env DBUS_SESSION_BUS_ADDRESS=unixexec:path=W/bin/bus-bridge); each is a node process that, as a
// desktop-notification server would at start, runs /usr/bin/dbus-send --session. The block writes
// W/bin/bus-bridge (a script appending to a marker outside W) and connects both. Expected: both refused
// with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-dbus-')

test('DBUS_SESSION_BUS_ADDRESS=unixexec:path=<a program in a root> is refused', () => {
  assert.ok(existsSync('/usr/bin/dbus-send'), "this test needs libdbus's dbus-send (apt: dbus-bin)")
  const { W, home, outside, marker } = attackFolders(base)
  const bridge = `${W}/bin/bus-bridge`
  // What a notification server does at start: ask the session bus for the notification daemon.
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: [
      '-e',
      "require('node:child_process').spawnSync('/usr/bin/dbus-send', ['--session', '--print-reply', " +
        "'--dest=org.freedesktop.Notifications', '/org/freedesktop/Notifications', " +
        "'org.freedesktop.Notifications.GetServerInformation'], { timeout: 5000 }); setTimeout(() => {}, 5000)",
    ],
    env,
    timeout_ms: 8_000,
  })
  const script = `#!/bin/sh\necho "W/bin/bus-bridge, written by the block, run on the host by dbus-send through DBUS_SESSION_BUS_ADDRESS" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ DBUS_SOCKET: `unixexec:path=${bridge}` }),
      bus: server({ DBUS_SESSION_BUS_ADDRESS: `unixexec:path=${bridge}` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/bin', exist_ok=True)",
      `open(W + '/bin/bus-bridge', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(W + '/bin/bus-bridge', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'bus']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(
    out,
    /control refused mcp\.launch-denied/,
    `DBUS_SOCKET=unixexec:path=W/... is refused (${out})`,
  )
  assert.ok(
    !existsSync(marker),
    `env DBUS_SESSION_BUS_ADDRESS=unixexec:path=W/bin/bus-bridge passed the launch check (its name is not ` +
      `"like a location") and the host's dbus-send executed the block's program: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
  assert.match(
    out,
    /bus refused mcp\.launch-denied/,
    `DBUS_SESSION_BUS_ADDRESS=unixexec:path=W/... passed the launch check (${out.slice(0, 600)})`,
  )
})
