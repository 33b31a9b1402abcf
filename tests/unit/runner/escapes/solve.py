"""A hostile candidate: answers a MaxCut instance correctly, but first tries one way to leave a
process behind (argv[4]); every such process carries the test's unique marker (argv[3]) in its argv.
Optional argv[5]: a file it tries to overwrite (an input of the evaluation)."""

import os
import signal
import subprocess
import sys
import time

inst, sol, mark, how = sys.argv[1:5]
victim = sys.argv[5] if len(sys.argv) > 5 else None
PY = sys.executable
SLEEPER = [PY, "-c", "import time\nwhile True: time.sleep(1)", mark]
QUIET = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


def answer():
    n = int(open(inst).read().split()[0])
    with open(sol, "w") as fh:
        fh.write(" ".join(str(i % 2) for i in range(n)) + "\n")


def spawn_setsid_env():
    subprocess.Popen(["setsid", "env", "-i", *SLEEPER], **QUIET)


if how == "setsid_env":  # a new session with an emptied environment (no run marker)
    spawn_setsid_env()
elif how == "setsid_fork":  # setsid -f: setsid forks itself away
    subprocess.run(["setsid", "-f", "env", "-i", *SLEEPER], **QUIET)
elif how == "double_fork":  # the classic daemon: fork, setsid, fork, parent exits
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve(PY, SLEEPER, {})
        os._exit(0)
    os.wait()
elif how == "new_pgrp":  # a new process group, environment emptied
    if os.fork() == 0:
        os.setpgid(0, 0)
        os.execve(PY, SLEEPER, {})
elif how == "daemon_shell":  # nohup ... & from a shell that exits at once
    cmd = f"nohup env -i {PY} -c 'import time\nwhile True: time.sleep(1)' {mark} >/dev/null 2>&1 </dev/null &"
    subprocess.run(["sh", "-c", cmd], **QUIET)
elif how == "respawn_on_term":  # never ends; answers SIGTERM with one more escapee
    signal.signal(signal.SIGTERM, lambda *_: spawn_setsid_env())
    answer()
    spawn_setsid_env()
    while True:
        time.sleep(0.05)
elif how == "kill_launcher":  # kills its parent (the harness's launcher), then leaves an escapee
    spawn_setsid_env()  # no pause: the harness has no chance to sample the escapee
    try:
        os.kill(os.getppid(), signal.SIGKILL)
    except OSError:
        pass
    answer()
    os._exit(0)
elif how == "fork_hop":  # keeps moving: each generation forks the next and exits
    if os.fork() == 0:
        os.setsid()
        for _ in range(100000):
            if os.fork():
                os._exit(0)
            time.sleep(0.01)
if victim:
    try:
        with open(victim, "w") as fh:
            fh.write("1 0\n")
    except OSError as exc:
        print(f"could not write {victim}: {exc}", file=sys.stderr)
time.sleep(0.3)  # let the escapees start
answer()
