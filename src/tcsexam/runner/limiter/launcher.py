"""The C launcher: a tiny exec shim compiled once (cached under $TCSEXAM_CACHE or
~/.cache/tcsexam) that joins the run's cgroups, applies the rlimits, and then stays as the run's
own child subreaper: it forks the program, and every process of the run that is orphaned (setsid,
double fork, a daemonising shell, an emptied environment) re-parents to it instead of to init.
When the program ends, the launcher SIGKILLs every child it still has, reaps them until none is
left, and exits with the program's own status (re-raising the signal that killed it, so a death by
signal stays one). A process cannot leave a subreaper's subtree, so nothing of a run outlives it.

The launcher also dies with its harness: it asks the kernel for SIGUSR1 when the harness thread
that started it ends (PR_SET_PDEATHSIG; that thread watches the run to its end), and then SIGKILLs
the program, whose whole run it kills and reaps as above. A harness that is SIGKILLed (a Ray actor
at the end of its job, an OOM kill) or crashes takes its runs with it, whether or not anybody
sweeps for orphans. The program in turn dies with the launcher (its own PR_SET_PDEATHSIG:
SIGKILL): a Ray worker that exits SIGKILLs its children, the launcher among them, which cannot
then kill the program itself. What the program's own children left behind is found by the run's
environment marker (`tcsexam.runner.limiter.orphans.kill_run_orphans`).

A command it drops to another uid (a root harness's `local` run) also gets pid and mount
namespaces of its own, with the launcher's child as their pid 1 (root: out of the command's reach):
every candidate of a root harness shares one uid by default, and without them its `kill -9 -1`
would kill every other run of that uid on the machine.

It also keeps `subprocess` on its fast vfork path (a Python `preexec_fn` forces a full fork, ~2 ms
more per run). Without a C compiler the limiter falls back to a `preexec_fn` (the harness itself is
then the subreaper and recognises escaped processes by the run's environment marker).
TCSEXAM_LAUNCHER=0 disables the launcher.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import resource
import shutil
import signal as _signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from tcsexam.paths import cache_dir, harness_owned

LAUNCHER_C = r"""
/* tcsexam launcher: join cgroups, set rlimits, wait for `go`, fork the command as a child
   subreaper, kill and reap every leftover, exit with the command's status. argv:
   launcher ERRFD START FSIZE CPU_SOFT CPU_HARD DATA SELF ENVFD UID GID NNP NFILES FILE... -- COMMAND ARGS
   (-1: unlimited / none). Failures are written to ERRFD (close-on-exec, so the harness reads EOF
   once exec succeeded). START: an fd to read the line `go` from before the command starts, once
   "ready\n" has been written to ERRFD (anything else, or end of file: exit 126, the command never
   runs); -1: at once. SELF: the fd this launcher was executed from (made close-on-exec). ENVFD:
   an fd holding the command's environment (NUL-separated KEY=VALUE): it is applied only in the
   command's own process, right before its execvp (the launcher itself runs with the harness's
   sanitised environment: no loader variable or PATH of the candidate ever reaches it). UID/GID:
   the command runs as this uid and gid with no supplementary groups (-1: unchanged), in an IPC
   namespace of its own (SysV shared memory, semaphores, message queues and POSIX message queues
   it leaves die with its last process; best effort: kept when unshare is refused); NNP 1: the
   command gets PR_SET_NO_NEW_PRIVS. When the harness thread that started the launcher dies
   (PR_SET_PDEATHSIG: SIGUSR1), the command is SIGKILLed and the run ends as above; when the
   launcher itself is SIGKILLed, the kernel SIGKILLs the command (its PR_SET_PDEATHSIG). */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
static int errfd = 2;
static volatile pid_t child = -1;
static void fail(const char *kind, const char *what) {
  dprintf(errfd, "%s:%s: %s", kind, what, strerror(errno));
  _exit(126);
}
static void lim(int which, long long soft, long long hard, const char *name) {
  if (soft < 0) return;
  struct rlimit r = {(rlim_t)soft, (rlim_t)hard};
  if (setrlimit(which, &r) != 0) fail("harness", name);
}
static volatile sig_atomic_t harness_gone = 0;
static void forward(int sig) { if (child > 0) kill(child, sig); }
static volatile pid_t command = -1; /* in the run's pid 1 (see run_init): the command */
static void forward_in(int sig) { if (command > 0) kill(command, sig); }
static void orphaned(int sig) { /* the harness died: the run must not outlive it */
  (void)sig;
  harness_gone = 1;
  if (child > 0) kill(child, SIGKILL);
}
static int kill_children(void) { /* SIGKILL every process whose parent is this launcher */
  char path[64], buf[512];
  int n = 0, me = (int)getpid();
  DIR *d = opendir("/proc");
  struct dirent *e;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) continue;
    buf[len] = 0;
    char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == me && state != 'Z') {
      kill(atoi(e->d_name), SIGKILL);
      n++;
    }
  }
  closedir(d);
  return n;
}
static char **read_env(int fd) { /* NUL-separated KEY=VALUE entries -> a NULL-terminated array */
  size_t cap = 4096, len = 0, n = 0, i;
  char *buf = malloc(cap);
  ssize_t r;
  if (!buf) fail("harness", "malloc");
  lseek(fd, 0, SEEK_SET);
  while ((r = read(fd, buf + len, cap - len)) != 0) {
    if (r < 0) { if (errno == EINTR) continue; fail("harness", "ENVFD"); }
    len += (size_t)r;
    if (len == cap && !(buf = realloc(buf, cap *= 2))) fail("harness", "realloc");
  }
  close(fd);
  for (i = 0; i < len; i++) if (buf[i] == 0) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env) fail("harness", "calloc");
  n = 0;
  for (i = 0; i < len; i += strlen(buf + i) + 1) env[n++] = buf + i;
  env[n] = NULL;
  return env;
}
extern char **environ;
/* The command's own process: drop to uid/gid, die with the parent `parent` (its pid as this
   process sees it), exec. */
static void run_command(pid_t parent, char **cmd, char **cmdenv, int uid, int gid, int nnp) {
  if (uid >= 0) (void)unshare(CLONE_NEWIPC); /* nothing of its IPC outlives the run */
  if (gid >= 0 && (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0)) fail("harness", "setresgid");
  if (uid >= 0 && setresuid(uid, uid, uid) != 0) fail("harness", "setresuid");
  /* after the credential change (which clears it): a launcher SIGKILLed (e.g. by a Ray worker
     that kills its children as it exits) takes the command with it */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("harness", "PR_SET_PDEATHSIG");
  if (getppid() != parent) _exit(126); /* it died before the kernel was told to tell us */
  if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("harness", "PR_SET_NO_NEW_PRIVS");
  environ = cmdenv; /* the command's own environment: its PATH finds the command */
  execvp(cmd[0], cmd);
  fail("exec", cmd[0]);
}
/* Pid 1 of the command's pid namespace (root, never the candidate's uid: the command cannot
   signal it). It mounts that namespace's /proc in a mount namespace of its own (best effort),
   forks the command (errors before its exec go to ERRFD as the launcher's do), forwards SIGTERM/SIGINT/SIGHUP to it, reaps whatever re-parents to it,
   and once the command ended writes its wait status to `out` (after a first byte written at
   start: a launcher already gone fails that write) and exits: the kernel then SIGKILLs
   whatever is left in the namespace, reaped before this process is. */
static void run_init(int out, char **cmd, char **cmdenv, int uid, int gid, int nnp) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("harness", "PR_SET_PDEATHSIG");
  signal(SIGPIPE, SIG_IGN);
  if (write(out, "1", 1) != 1) _exit(126); /* the launcher died before the kernel was told */
  signal(SIGPIPE, SIG_DFL);
  if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0)
    (void)mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  pid_t c = fork();
  if (c < 0) fail("harness", "fork");
  if (c == 0) {
    close(out);
    run_command(1, cmd, cmdenv, uid, gid, nnp);
  }
  command = c;
  close(errfd); /* the command's copy closes at its exec: the harness then reads end of file */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward_in;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  int status = 0;
  for (;;) {
    int st;
    pid_t w = waitpid(-1, &st, 0);
    if (w == c) { status = st; break; }
    if (w < 0 && errno != EINTR) break;
  }
  ssize_t wrote = write(out, &status, sizeof status);
  (void)wrote;
  _exit(0);
}
int main(int argc, char **argv) {
  if (argc < 15) { fputs("tcsexam-launch: bad arguments\n", stderr); return 126; }
  errfd = atoi(argv[1]);
  fcntl(errfd, F_SETFD, FD_CLOEXEC);
  int start = atoi(argv[2]);
  long long fsize = atoll(argv[3]), cs = atoll(argv[4]), ch = atoll(argv[5]), data = atoll(argv[6]);
  int self = atoi(argv[7]), envfd = atoi(argv[8]), uid = atoi(argv[9]), gid = atoi(argv[10]), nnp = atoi(argv[11]);
  int n = atoi(argv[12]), i, status = 0;
  char **cmd = argv + 14 + n, **cmdenv = environ;
  if (self >= 0) fcntl(self, F_SETFD, FD_CLOEXEC);
  pid_t harness = getppid();
  struct sigaction gone;
  memset(&gone, 0, sizeof gone);
  gone.sa_handler = orphaned;
  sigaction(SIGUSR1, &gone, NULL);
  if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) != 0) fail("harness", "PR_SET_PDEATHSIG");
  if (getppid() != harness) _exit(126); /* it died before the kernel was told to tell us */
  char pid[32];
  int len = snprintf(pid, sizeof pid, "%d", (int)getpid());
  for (i = 0; i < n; i++) {
    int fd = open(argv[13 + i], O_WRONLY);
    if (fd < 0 || write(fd, pid, len) != len) fail("harness", argv[13 + i]);
    close(fd);
  }
  if (13 + n >= argc - 1 || strcmp(argv[13 + n], "--") != 0) { errno = EINVAL; fail("harness", "--"); }
  if (envfd >= 0) cmdenv = read_env(envfd);
  lim(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
  lim(RLIMIT_CPU, cs, ch, "RLIMIT_CPU");
  lim(RLIMIT_DATA, data, data, "RLIMIT_DATA");
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fail("harness", "PR_SET_CHILD_SUBREAPER");
  signal(SIGPIPE, SIG_DFL);
  signal(SIGXFSZ, SIG_DFL);
  if (start >= 0) { /* prepared ahead: say so, then wait for the harness's go */
    char go[4] = {0};
    ssize_t got = 0, r;
    fcntl(start, F_SETFD, FD_CLOEXEC);
    if (write(errfd, "ready\n", 6) != 6) _exit(126);
    while (got < 3 && ((r = read(start, go + got, 3 - got)) > 0 || (r < 0 && errno == EINTR)))
      if (r > 0) got += r;
    if (got != 3 || memcmp(go, "go\n", 3) != 0) _exit(126);
    close(start);
  }
  /* a uid of its own to drop to means a root harness running an unsandboxed (local) command:
     it gets a pid namespace of its own (best effort: kept out when unshare is refused), so it
     can signal nothing of the machine's, nor see it in /proc: `kill -9 -1` as the shared
     candidate uid would otherwise kill every other run of that uid (other jobs' sandboxed
     candidates and proof checks included). Its pid 1 is this launcher's child (run_init). */
  int pidns = uid >= 0 && unshare(CLONE_NEWPID) == 0, report[2] = {-1, -1};
  if (pidns && pipe2(report, O_CLOEXEC) != 0) fail("harness", "pipe2");
  pid_t launcher = getpid();
  pid_t c = fork();
  if (c < 0) fail("harness", "fork");
  if (c == 0 && pidns) {
    close(report[0]);
    run_init(report[1], cmd, cmdenv, uid, gid, nnp);
  }
  if (c == 0) run_command(launcher, cmd, cmdenv, uid, gid, nnp);
  if (pidns) close(report[1]);
  child = c;
  if (harness_gone) kill(c, SIGKILL); /* it died between our fork and `child` being set */
  close(errfd);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  for (;;) { /* wait for the command; reap orphans of the run that exit meanwhile */
    int st;
    pid_t w = waitpid(-1, &st, 0);
    if (w == c) { status = st; break; }
    if (w < 0 && errno != EINTR) break;
  }
  if (pidns) { /* the command's own status, as its pid 1 reported it (else pid 1's: killed) */
    int st;
    char hello;
    if (read(report[0], &hello, 1) == 1 && read(report[0], &st, sizeof st) == (ssize_t)sizeof st) status = st;
    close(report[0]);
  }
  for (;;) { /* then nothing of the run may stay: kill and reap until no child is left */
    int st;
    pid_t w = waitpid(-1, &st, WNOHANG);
    if (w < 0 && errno == ECHILD) break; /* the common case: no child left, no /proc scan */
    if (w > 0) continue;
    kill_children();
    w = waitpid(-1, &st, 0);
    if (w < 0 && errno != EINTR) break;
  }
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  _exit(126);
}
"""
_launcher_lock = threading.Lock()
_launcher_path: str | None | bool = False
_launcher_memfd: tuple[int, int] | None = None  # (pid, fd): per process (a fork gets its own)


def launcher() -> str | None:
    """The compiled launcher (see the module doc); cached under $TCSEXAM_CACHE or ~/.cache/tcsexam. It applies
    the rlimits and joins the cgroups before exec: it keeps `subprocess` on its fast vfork path
    (a Python `preexec_fn` forces a full fork, ~2 ms more per run). None where no C compiler is
    found: the limiter then uses a `preexec_fn`. TCSEXAM_LAUNCHER=0 disables it.

    The cache belongs to the harness: a cached file (or its folder) that is not owned by this
    user or is writable by anybody else is never executed; it is compiled again into a fresh
    private folder instead (cache folder mode 0755, file 0555)."""
    global _launcher_path
    with _launcher_lock:
        if _launcher_path is not False:
            return _launcher_path  # type: ignore[return-value]
        _launcher_path = None
        if os.environ.get("TCSEXAM_LAUNCHER", "1") == "0":
            return None

        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        digest = hashlib.sha256(LAUNCHER_C.encode()).hexdigest()[:16]
        cache = cache_dir()
        target = cache / f"launch-{digest}"
        if harness_owned(target) and os.access(target, os.X_OK):
            _launcher_path = str(target)
            return _launcher_path
        if cc is None:
            return None
        try:
            cache.mkdir(parents=True, exist_ok=True, mode=0o755)
            if not harness_owned(target) and (
                os.lstat(cache).st_uid != os.geteuid() or os.lstat(cache).st_mode & 0o022
            ):
                cache = Path(tempfile.mkdtemp(prefix="tcsexam-launcher-"))  # not ours: never trusted
                os.chmod(cache, 0o755)
                target = cache / f"launch-{digest}"
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                src = Path(tmp) / "launch.c"
                src.write_text(LAUNCHER_C)
                out = Path(tmp) / "launch"
                for extra in (["-static"], []):
                    done = subprocess.run(
                        [cc, "-O2", *extra, "-o", str(out), str(src)],
                        capture_output=True,
                        timeout=120,
                        env=harness_env(),
                    )
                    if done.returncode == 0:
                        os.chmod(out, 0o555)
                        os.replace(out, target)
                        _launcher_path = str(target)
                        break
        except (OSError, subprocess.SubprocessError):
            _launcher_path = None
        return _launcher_path


def launcher_fd() -> int | None:
    """A sealed in-memory copy of the launcher (memfd), loaded once per process after the
    ownership check of `launcher`, with its sha256 checked against the file's: every run execs
    ``/proc/self/fd/N`` from it, so replacing the cached file later changes nothing that runs."""
    global _launcher_memfd
    path = launcher()
    if path is None:
        return None
    with _launcher_lock:
        if _launcher_memfd is not None and _launcher_memfd[0] == os.getpid():
            return _launcher_memfd[1]

        data = Path(path).read_bytes()
        fd = os.memfd_create("tcsexam-launch", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.write(fd, data)
        fcntl.fcntl(
            fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        )
        with open(f"/proc/self/fd/{fd}", "rb") as fh:
            if hashlib.sha256(fh.read()).digest() != hashlib.sha256(data).digest():
                os.close(fd)
                return None
        os.fchmod(fd, 0o555)
        _launcher_memfd = (os.getpid(), fd)
        return fd


#: the only environment the launcher and a sandbox's runtime (bwrap, apptainer) ever run with
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def harness_env() -> dict[str, str]:
    """The sanitised environment for the processes that set a run up (the launcher, bwrap,
    apptainer, the compiler): a fixed PATH, the locale; nothing of the candidate's or of the
    harness's secrets."""
    env = {"PATH": SAFE_PATH}
    for key in ("LANG", "LC_ALL", "TZ"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def env_memfd(env: dict[str, str]) -> int:
    """A memfd holding `env` as NUL-separated KEY=VALUE entries (the launcher's ENVFD)."""
    fd = os.memfd_create("tcsexam-env", os.MFD_CLOEXEC)
    data = b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items() if "=" not in k and "\0" not in k + v)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return fd


@dataclass(frozen=True)
class LauncherArgs:
    """The launcher's numeric fields (see LAUNCHER_C for the meaning of each; -1: unset)."""

    errfd: int
    start: int = -1
    fsize: int = -1
    cpu_soft: int = -1
    cpu_hard: int = -1
    data: int = -1
    self_fd: int = -1
    envfd: int = -1
    uid: int = -1
    gid: int = -1
    nnp: bool = False


def launcher_argv(exe: str, args: LauncherArgs, *, procs_files=(), command=()) -> list[str]:
    """The launcher's command line: `exe`, its fields, the cgroup.procs files, ``--``, `command`."""
    a = args
    nums = [a.errfd, a.start, a.fsize, a.cpu_soft, a.cpu_hard, a.data, a.self_fd, a.envfd, a.uid, a.gid, int(a.nnp)]
    return [exe, *map(str, [*nums, len(procs_files)]), *procs_files, "--", *command]


CLONE_NEWIPC = 0x08000000


def make_preexec(rlimits: list[tuple[int, int, int]], procs_files: list[str], uid: int = -1, gid: int = -1):
    unshare = None
    if uid >= 0:  # the launcher's own IPC namespace for the command (see LAUNCHER_C), resolved ahead
        unshare = ctypes.CDLL(None, use_errno=True).unshare

    def preexec() -> None:  # runs in the child between fork and exec: no locks, no allocation
        pid = str(os.getpid()).encode()
        for path in procs_files:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        for which, soft, hard in rlimits:
            resource.setrlimit(which, (soft, hard))
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
        if unshare is not None:
            unshare(CLONE_NEWIPC)  # best effort, as in the launcher
        if gid >= 0:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
        if uid >= 0:
            os.setresuid(uid, uid, uid)

    return preexec
