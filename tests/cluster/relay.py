#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# A hostile node's sshd ForceCommand (tests/cluster/relay.sh sets it up):
# runs the command the controller asked for and rewrites its answers by the
# rules in NODE/relay.rules, one a line (none, or the file absent: an honest
# relay, the control):
#
#   hang REGEX      a command (SSH_ORIGINAL_COMMAND; "internal-sftp" for the
#                   SFTP subsystem) matching REGEX reads its input and never
#                   answers nor exits, until the controller closes the channel
#   cut N REGEX     a command matching REGEX runs for real but gets only the
#                   first N bytes of its input, then its input ends (an upload
#                   cut short); the relay then answers nothing, as hang does
#   version HASH    the agent session's `version` answers report sha256 HASH
#   facts FILE      the agent session's `facts` answer is FILE's bytes, as
#                   they are (the frame's "answer" value; may be any size,
#                   depth or even not JSON)
#   implant VERB    the agent session's VERB answer (plan, apply, teardown)
#                   gains unknown fields "implant", at its top and in each
#                   of its changes and its summary; a `run` answer (VERB
#                   run) gains "implant" and a "verdict" of pass, exits 1,
#                   and its output is one error line that carries a window
#                   title, an erase-line, a green PASS and a NUL (FORGED)
#
#   relay.py NODE_DIR
#
# Every relay process writes its PID to NODE/relay.pids, so the harness ends
# only what it started. A hung command gives up after 600 s at the latest.
import json
import os
import re
import select
import subprocess
import sys
import threading
import time

SESSION = re.compile(r'llmnet-agent"? session$')
SFTP_SERVER = "/usr/lib/openssh/sftp-server"
FORGED = "rping: error \x1b]0;implant\x07\r\x1b[2K\x1b[32mPASS\x00 hidden\n"


def load_rules(node):
    rules = []
    try:
        with open(os.path.join(node, "relay.rules")) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 1)
                if len(parts) == 2:
                    rules.append((parts[0], parts[1]))
    except FileNotFoundError:
        pass
    return rules


def hang():
    """Read the input to its end, answer nothing, stay until the reader of
    our output is gone (the channel closed)."""
    while os.read(0, 65536):
        pass
    p = select.poll()
    p.register(1, select.POLLERR | select.POLLHUP)
    end = time.monotonic() + 600
    while time.monotonic() < end and not p.poll(1000):
        pass
    os._exit(0)


def cut(cmd, n):
    """Run cmd with only the first n bytes of our input, end its input,
    wait for it, then hang (the controller sees a link that stopped)."""
    child = subprocess.Popen(["sh", "-c", cmd], stdin=subprocess.PIPE)
    left = n
    while left > 0:
        b = os.read(0, min(65536, left))
        if not b:
            break
        child.stdin.write(b)
        left -= len(b)
    child.stdin.close()
    child.wait()
    hang()


def read_frame(f):
    """One frame (header, payload) from f, or None at the end."""
    head = b""
    while not head.endswith(b"\n"):
        c = f.read(1)
        if not c:
            return None
        head += c
        if len(head) > 16:
            return None
    n = int(head)
    body = b""
    while len(body) < n:
        c = f.read(n - len(body))
        if not c:
            return None
        body += c
    return body


def put_frame(f, body):
    f.write(b"%d\n" % len(body) + body)
    f.flush()


def frame_id(body):
    m = re.search(rb'"id":\s*(-?\d+|null)', body)
    return m.group(1) if m else b"null"


def rewrite(body, verb, rules):
    for name, arg in rules:
        if name == "version" and verb == "version":
            body = re.sub(rb'"sha256":\s*"[0-9a-f]*"', b'"sha256":"' + arg.encode() + b'"', body)
        elif name == "facts" and verb == "facts":
            with open(arg, "rb") as f:
                answer = f.read()
            body = b'{"protocol":3,"id":' + frame_id(body) + b',"exit":0,"answer":' + answer + b"}\n"
        elif name == "implant" and verb == arg:
            frame = json.loads(body)
            a = frame.get("answer")
            if isinstance(a, dict):
                a["implant"] = {"payload": "implant-top"}
                for c in a.get("changes") or []:
                    if isinstance(c, dict):
                        c["implant"] = "implant-change"
                if isinstance(a.get("summary"), dict):
                    a["summary"]["implant"] = 1
                if verb == "run":
                    a.update(verdict="pass", exit_status=1, output=FORGED,
                             output_bytes=len(FORGED))
            body = json.dumps(frame, separators=(",", ":")).encode() + b"\n"
    return body


def session(cmd, rules):
    """Relay the agent session frame by frame; requests pass as they are,
    answers are rewritten by the verb of the request they answer (the
    agent answers in order)."""
    child = subprocess.Popen(["sh", "-c", cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    verbs = []
    lock = threading.Lock()

    def requests():
        inp = sys.stdin.buffer
        while True:
            body = read_frame(inp)
            if body is None:
                break
            m = re.search(rb'"verb":\s*"([a-z]+)"', body)
            with lock:
                verbs.append(m.group(1).decode() if m else "")
            try:
                put_frame(child.stdin, body)
            except BrokenPipeError:
                break
        child.stdin.close()

    threading.Thread(target=requests, daemon=True).start()
    out = sys.stdout.buffer
    while True:
        body = read_frame(child.stdout)
        if body is None:
            break
        with lock:
            verb = verbs.pop(0) if verbs else ""
        try:
            put_frame(out, rewrite(body, verb, rules))
        except BrokenPipeError:
            child.kill()
            break
    sys.exit(child.wait())


def main():
    node = sys.argv[1]
    with open(os.path.join(node, "relay.pids"), "a") as f:
        f.write("%d\n" % os.getpid())
    cmd = os.environ.get("SSH_ORIGINAL_COMMAND", "")
    rules = load_rules(node)
    for name, arg in rules:
        if name == "hang" and re.search(arg, cmd):
            hang()
        if name == "cut" and re.search(arg.split(" ", 1)[1], cmd):
            cut(cmd, int(arg.split(" ", 1)[0]))
    if cmd == "internal-sftp":
        os.execv(SFTP_SERVER, [SFTP_SERVER])
    if SESSION.search(cmd) and any(n in ("version", "facts", "implant") for n, _ in rules):
        session(cmd, rules)
    os.execv("/bin/sh", ["sh", "-c", cmd])


if __name__ == "__main__":
    main()
