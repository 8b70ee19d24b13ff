"""Wire handler for bench/native-wire.js: exec the request's code, reply with the id."""

import json

import _vis

NS = _vis.namespace("bench")


def handle(line):
    msg = json.loads(line)
    try:
        exec(compile(msg["code"], "<bench>", "exec"), NS)
        return f'{{"id":{msg["id"]:d},"ok":true,"value":null}}'
    except BaseException as e:
        return json.dumps({"id": msg["id"], "ok": False, "error": {"code": "guest", "message": str(e)}})
