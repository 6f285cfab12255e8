/*
 * step-spawner: the process that starts every step process of run-service
 * (docs/decisions.md "Steps start from a small spawner process" → "A native
 * spawner").
 *
 * Why native: a step that does nothing costs about as much as starting it.
 * Node starts a child with fork + exec, whose cost grows with the forking
 * process's page tables, plus its own bookkeeping; this program starts one
 * with vfork + exec from a process of a few hundred kilobytes, and relays
 * output with one read and one write per chunk. On the bench machine that
 * took `sh -c true` from 1.46 ms to about 0.6 ms.
 *
 * Usage: step-spawner [--uid U --gid G]
 *   A spawn frame may also name its own uid, gid, umask and resource limits
 *   (issue 43: a uid per run); those win over --uid/--gid for that child.
 *   fd 0  frames from run-service (spawn, pause, resume, close_pipes)
 *   fd 1  frames to run-service (started, error, out, exit, close)
 *   fd 2  diagnostics only
 * A frame is a little-endian u32 length of what follows, then a u8 type, a
 * u32 child id (chosen by run-service), then the payload (see
 * spawner-protocol.ts, which is the contract for both sides).
 *
 * Per child: `started` (its pid) or `error` (exec failed, e.g. "spawn /nope
 * ENOENT"), then `out` frames and `exit` (the process ended; `out` frames
 * may still follow, and its pipes may be held open by a background process),
 * and last `close` (exited and both pipes closed: exit code, or the signal
 * that ended it).
 *
 * Every child leads a process group of its own (setsid), gets /dev/null as
 * stdin and two pipes as stdout and stderr, the environment it was given and
 * no other, default signal dispositions and an empty signal mask. With
 * `--uid U --gid G` it runs as that user with no supplementary groups;
 * run-service starts this program under `setpriv --no-new-privs`, which every
 * child inherits.
 *
 * When run-service goes away (fd 0 reaches end of file: a stop, a crash, a
 * kill -9) this program kills every group it started and exits, so no step
 * outlives run-service. SIGINT and SIGTERM are caught and do nothing: a
 * signal sent to run-service's whole group must not kill the steps before
 * run-service hands them back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { IN_SPAWN = 1, IN_PAUSE = 2, IN_RESUME = 3, IN_CLOSE_PIPES = 4 };
enum { OUT_STARTED = 1, OUT_ERROR = 2, OUT_STDOUT = 3, OUT_STDERR = 4, OUT_EXIT = 5, OUT_CLOSE = 6 };

/* A command frame larger than this is a protocol error (run-service caps a step's env and args far below it). */
#define MAX_FRAME (64u * 1024u * 1024u)
#define CHUNK 65536

struct child {
  uint32_t id;
  pid_t pid;
  int fds[2]; /* stdout, stderr read ends; -1 once closed */
  int paused;
  int exited;
  int status;
  struct child *next;
};

static struct child *children;
static int has_identity;
static uid_t step_uid;
static gid_t step_gid;
static char chunk[CHUNK];

static void kill_groups(void);
static void kill_all_and_exit(void) __attribute__((noreturn));

/* A fault the spawner cannot go on after: its steps die with it (run-service fails them). */
static void die(const char *what) {
  fprintf(stderr, "step-spawner: %s: %s\n", what, strerror(errno));
  kill_groups();
  exit(1);
}

/* Writes all of buf to fd 1, blocking: when run-service reads slowly, children's output waits in their pipes. */
static void write_all(const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(1, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      /* run-service is gone: the end of fd 0 follows and kills the groups. */
      return;
    }
    p += n;
    len -= (size_t)n;
  }
}

static void put_u32(unsigned char *p, uint32_t v) {
  p[0] = v & 0xff;
  p[1] = (v >> 8) & 0xff;
  p[2] = (v >> 16) & 0xff;
  p[3] = (v >> 24) & 0xff;
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* One frame: length, type, id, then `len` bytes of payload. */
static void send_frame(int type, uint32_t id, const void *payload, size_t len) {
  unsigned char head[9];
  put_u32(head, (uint32_t)(5 + len));
  head[4] = (unsigned char)type;
  put_u32(head + 5, id);
  if (len > 0 && len <= 4096) {
    /* Small frames in one write: fewer wake-ups on run-service's side. */
    unsigned char buf[9 + 4096];
    memcpy(buf, head, 9);
    memcpy(buf + 9, payload, len);
    write_all(buf, 9 + len);
    return;
  }
  write_all(head, 9);
  if (len > 0) write_all(payload, len);
}

static void send_u32s(int type, uint32_t id, uint32_t a, uint32_t b, int count) {
  unsigned char payload[8];
  put_u32(payload, a);
  put_u32(payload + 4, b);
  send_frame(type, id, payload, (size_t)count * 4);
}

static struct child *find_id(uint32_t id) {
  for (struct child *c = children; c != NULL; c = c->next)
    if (c->id == id) return c;
  return NULL;
}

static struct child *find_pid(pid_t pid) {
  for (struct child *c = children; c != NULL; c = c->next)
    if (c->pid == pid) return c;
  return NULL;
}

static void forget(struct child *gone) {
  for (struct child **p = &children; *p != NULL; p = &(*p)->next) {
    if (*p == gone) {
      *p = gone->next;
      free(gone);
      return;
    }
  }
}

/* `close` once the process was reaped and both pipes are closed: exit code (or -1), signal (or 0). */
static void close_if_done(struct child *c) {
  if (!c->exited || c->fds[0] >= 0 || c->fds[1] >= 0) return;
  uint32_t code = WIFEXITED(c->status) ? (uint32_t)WEXITSTATUS(c->status) : UINT32_MAX;
  uint32_t sig = WIFSIGNALED(c->status) ? (uint32_t)WTERMSIG(c->status) : 0;
  send_u32s(OUT_CLOSE, c->id, code, sig, 2);
  forget(c);
}

static void close_fd(struct child *c, int which) {
  if (c->fds[which] < 0) return;
  close(c->fds[which]);
  c->fds[which] = -1;
}

/* errno's name as Node spells it in "spawn <file> <CODE>", for the errors an exec or chdir gives. */
static const char *errno_name(int e) {
  switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ENOTDIR: return "ENOTDIR";
    case ENOEXEC: return "ENOEXEC";
    case E2BIG: return "E2BIG";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ELOOP: return "ELOOP";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENOMEM: return "ENOMEM";
    case EAGAIN: return "EAGAIN";
    case ETXTBSY: return "ETXTBSY";
    case EISDIR: return "EISDIR";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    default: return strerror(e);
  }
}

static void send_spawn_error(uint32_t id, const char *file, int e) {
  char message[512];
  int n = snprintf(message, sizeof message, "spawn %s %s", file, errno_name(e));
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof message) n = sizeof message - 1;
  send_frame(OUT_ERROR, id, message, (size_t)n);
}

/*
 * Where `file` may be executed from, as execvp looks for it with the child's
 * PATH: itself when it holds a slash, else `<dir>/<file>` for every PATH entry
 * in order (an empty entry is the working directory). Only listed here,
 * before vfork, so the child does no allocation; the child tries them after
 * its chdir and user switch, so relative entries and permissions are judged
 * as the step sees them (as Node's spawn does). Returns a NULL-terminated,
 * malloc'd array whose strings are malloc'd too, or NULL (out of memory).
 */
static char **candidates_of(const char *file, char *const *envp) {
  size_t count = 1;
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  if (strchr(file, '/') == NULL) {
    for (char *const *e = envp; *e != NULL; e++)
      if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
    for (const char *c = path; *c != '\0'; c++) count += *c == ':';
  }
  char **list = calloc(count + 1, sizeof(char *));
  if (list == NULL) return NULL;
  if (strchr(file, '/') != NULL) {
    list[0] = strdup(file);
    if (list[0] == NULL) {
      free(list);
      return NULL;
    }
    return list;
  }
  size_t flen = strlen(file);
  for (size_t i = 0; i < count; i++) {
    const char *end = strchr(path, ':');
    size_t dlen = end != NULL ? (size_t)(end - path) : strlen(path);
    char *full = malloc(dlen + flen + 3);
    if (full == NULL) {
      for (size_t j = 0; j < i; j++) free(list[j]);
      free(list);
      return NULL;
    }
    if (dlen == 0)
      snprintf(full, flen + 3, "./%s", file);
    else
      snprintf(full, dlen + flen + 2, "%.*s/%s", (int)dlen, path, file);
    list[i] = full;
    path = end != NULL ? end + 1 : path + dlen;
  }
  return list;
}

static void free_list(char **list) {
  if (list == NULL) return;
  for (char **p = list; *p != NULL; p++) free(*p);
  free(list);
}

/* Set by a vfork child that could not exec (it shares this memory until it execs or exits). */
static volatile int child_errno;

/* At most this many resource limits per spawn (RLIMIT_NPROC, _AS, _CPU, _FSIZE, …). */
#define MAX_LIMITS 8

/* prlimit64's own shape: 64-bit on every architecture. */
struct limit64 {
  uint64_t cur, max;
};

/* What the vfork child needs, all prepared by the parent. */
struct exec_plan {
  /* The identity of this child: switch to uid/gid when `switch_ids`; umask when `set_umask`. */
  int switch_ids, set_umask;
  uid_t uid;
  gid_t gid;
  unsigned umask;
  int nlimits;
  int resources[MAX_LIMITS];
  struct limit64 limits[MAX_LIMITS];
  char **candidates;
  char **argv;
  /* argv for execvp's /bin/sh fallback: sh_argv[1] is set to the candidate that gave ENOEXEC. */
  char **sh_argv;
  char **envp;
  const char *cwd;
  int devnull, out, err;
};

/* The user switch's system calls take 32-bit ids: on 32-bit x86 and ARM those are the *32 calls. */
#ifdef SYS_setuid32
#define SYS_SETUID SYS_setuid32
#define SYS_SETGID SYS_setgid32
#define SYS_SETGROUPS SYS_setgroups32
#else
#define SYS_SETUID SYS_setuid
#define SYS_SETGID SYS_setgid
#define SYS_SETGROUPS SYS_setgroups
#endif

/*
 * The vfork child: it shares the parent's memory until exec, so raw system
 * calls only, no allocation, and nothing written but `child_errno` and
 * `sh_argv[1]`. Its own stack frame (noinline) keeps it off the parent's
 * locals. Never returns.
 */
__attribute__((noinline, noreturn)) static void exec_child(struct exec_plan *plan) {
  sigset_t none;
  sigemptyset(&none);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, (size_t)(_NSIG / 8));
  if (syscall(SYS_setsid) < 0) goto failed;
  /*
   * chdir before the user switch, as Node's spawn does: the run directory belongs to the
   * step user, but a parent of it (RUN_WORK_DIR) may be closed to that user.
   */
  if (syscall(SYS_chdir, plan->cwd) != 0) goto failed;
  /* Limits before the switch: a lowered hard limit cannot be raised again by the step. */
  for (int i = 0; i < plan->nlimits; i++)
    if (syscall(SYS_prlimit64, 0, plan->resources[i], &plan->limits[i], NULL) != 0) goto failed;
  if (plan->set_umask) syscall(SYS_umask, plan->umask);
  if (plan->switch_ids) {
    /* Any failure ends the child: it never execs with root's ids. */
    if (syscall(SYS_SETGROUPS, 0, NULL) != 0) goto failed;
    if (syscall(SYS_SETGID, plan->gid) != 0) goto failed;
    if (syscall(SYS_SETUID, plan->uid) != 0) goto failed;
  }
  /* The copies have no close-on-exec flag; the originals close at exec (all are above 2). */
  if (syscall(SYS_dup3, plan->devnull, 0, 0) < 0 || syscall(SYS_dup3, plan->out, 1, 0) < 0 ||
      syscall(SYS_dup3, plan->err, 2, 0) < 0)
    goto failed;
  /* execvp's rules: go on past ENOENT and ENOTDIR, remember EACCES, stop at any other error. */
  int seen_eacces = 0;
  for (char **c = plan->candidates; *c != NULL; c++) {
    syscall(SYS_execve, *c, plan->argv, plan->envp);
    if (errno == ENOEXEC) {
      /* A file the kernel cannot execute (no #! line) runs as a /bin/sh script. */
      plan->sh_argv[1] = *c;
      syscall(SYS_execve, plan->sh_argv[0], plan->sh_argv, plan->envp);
      break;
    }
    if (errno == EACCES) seen_eacces = 1;
    else if (errno != ENOENT && errno != ENOTDIR) break;
  }
  if (seen_eacces) errno = EACCES;
failed:
  child_errno = errno != 0 ? errno : EINVAL;
  syscall(SYS_exit, 127);
  _exit(127);
}

/* vfork + exec in a frame of its own, so no local of the caller lives across vfork. */
__attribute__((noinline)) static pid_t start_child(struct exec_plan *plan) {
  child_errno = 0;
  pid_t pid = vfork();
  if (pid == 0) exec_child(plan);
  return pid;
}

/*
 * spawn payload: file \0 cwd \0 u32 argc, argc × (arg \0), u32 envc, envc × ("K=V" \0),
 * then optionally (issue 43) u32 uid, u32 gid, u32 umask, u32 nlimits,
 * nlimits × (u32 resource, u32 low, u32 high of the 64-bit limit, set as both soft and hard).
 * args hold argv[1..]; argv[0] is `file`. Any failure to start is answered
 * with `error` for this child alone; the spawner goes on.
 */
static void spawn_child(uint32_t id, unsigned char *p, size_t len) {
  unsigned char *end = p + len;
  char **argv = NULL, **envp = NULL, **sh_argv = NULL, **candidates = NULL;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, devnull = -1;
  char *file = (char *)p;
  unsigned char *q = memchr(p, 0, len);
  if (q == NULL) goto malformed;
  char *cwd = (char *)(q + 1);
  q = memchr(q + 1, 0, (size_t)(end - (q + 1)));
  if (q == NULL || end - (q + 1) < 4) goto malformed;
  q++;
  uint32_t argc = get_u32(q);
  q += 4;
  /* Each arg takes at least its NUL: a count beyond the bytes left is a broken frame. */
  if (argc > (size_t)(end - q)) goto malformed;
  argv = calloc((size_t)argc + 2, sizeof(char *));
  sh_argv = calloc((size_t)argc + 3, sizeof(char *));
  if (argv == NULL || sh_argv == NULL) goto out_of_memory;
  argv[0] = file;
  for (uint32_t i = 0; i < argc; i++) {
    unsigned char *z = memchr(q, 0, (size_t)(end - q));
    if (z == NULL) goto malformed;
    argv[i + 1] = (char *)q;
    q = z + 1;
  }
  if (end - q < 4) goto malformed;
  uint32_t envc = get_u32(q);
  q += 4;
  if (envc > (size_t)(end - q)) goto malformed;
  envp = calloc((size_t)envc + 1, sizeof(char *));
  if (envp == NULL) goto out_of_memory;
  for (uint32_t i = 0; i < envc; i++) {
    unsigned char *z = memchr(q, 0, (size_t)(end - q));
    if (z == NULL) goto malformed;
    envp[i] = (char *)q;
    q = z + 1;
  }
  struct exec_plan plan = {0};
  plan.switch_ids = has_identity;
  plan.uid = step_uid;
  plan.gid = step_gid;
  if (q < end) {
    if (end - q < 16) goto malformed;
    plan.switch_ids = 1;
    plan.uid = (uid_t)get_u32(q);
    plan.gid = (gid_t)get_u32(q + 4);
    plan.set_umask = 1;
    plan.umask = get_u32(q + 8) & 0777;
    uint32_t nlimits = get_u32(q + 12);
    q += 16;
    if (nlimits > MAX_LIMITS || (size_t)(end - q) != (size_t)nlimits * 12) goto malformed;
    plan.nlimits = (int)nlimits;
    for (uint32_t i = 0; i < nlimits; i++, q += 12) {
      uint64_t v = (uint64_t)get_u32(q + 4) | ((uint64_t)get_u32(q + 8) << 32);
      plan.resources[i] = (int)get_u32(q);
      plan.limits[i] = (struct limit64){v, v};
    }
  }
  candidates = candidates_of(file, envp);
  if (candidates == NULL) goto out_of_memory;
  sh_argv[0] = "/bin/sh";
  for (uint32_t i = 0; i < argc; i++) sh_argv[i + 2] = argv[i + 1];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    goto system_error;
  struct child *c = calloc(1, sizeof *c);
  if (c == NULL) goto out_of_memory;

  plan.candidates = candidates;
  plan.argv = argv;
  plan.sh_argv = sh_argv;
  plan.envp = envp;
  plan.cwd = cwd;
  plan.devnull = devnull;
  plan.out = out[1];
  plan.err = err[1];
  pid_t pid = start_child(&plan);
  int spawn_errno = pid < 0 ? errno : child_errno;
  close(devnull);
  close(out[1]);
  close(err[1]);
  free_list(candidates);
  free(argv);
  free(sh_argv);
  free(envp);
  if (pid < 0 || spawn_errno != 0) {
    free(c);
    close(out[0]);
    close(err[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    send_spawn_error(id, file, spawn_errno);
    return;
  }
  c->id = id;
  c->pid = pid;
  c->fds[0] = out[0];
  c->fds[1] = err[0];
  c->next = children;
  children = c;
  send_u32s(OUT_STARTED, id, (uint32_t)pid, 0, 1);
  return;

malformed:
  fprintf(stderr, "step-spawner: malformed spawn frame for child %u\n", id);
  send_frame(OUT_ERROR, id, "malformed spawn request", 23);
  goto release;
out_of_memory:
  errno = ENOMEM;
system_error:
  /* Out of descriptors or memory: this step fails to start, the others go on. */
  send_spawn_error(id, file, errno);
release:
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
  }
  if (devnull >= 0) close(devnull);
  free_list(candidates);
  free(argv);
  free(sh_argv);
  free(envp);
}

static void handle_frame(unsigned char *frame, uint32_t len) {
  if (len < 5) {
    fprintf(stderr, "step-spawner: short frame\n");
    kill_all_and_exit();
  }
  int type = frame[0];
  uint32_t id = get_u32(frame + 1);
  if (type == IN_SPAWN) {
    spawn_child(id, frame + 5, len - 5);
    return;
  }
  struct child *c = find_id(id);
  if (c == NULL) return;
  if (type == IN_PAUSE) c->paused = 1;
  if (type == IN_RESUME) c->paused = 0;
  if (type == IN_CLOSE_PIPES) {
    close_fd(c, 0);
    close_fd(c, 1);
    close_if_done(c);
  }
}

/*
 * Kills every group this spawner started that may still exist: leaders not
 * reaped yet, and reaped ones whose pipes are still held (a background
 * process of the group). A reaped leader with both pipes closed is skipped:
 * its pid could now lead someone else's group.
 */
static void kill_groups(void) {
  for (struct child *c = children; c != NULL; c = c->next)
    if (!c->exited || c->fds[0] >= 0 || c->fds[1] >= 0) kill(-c->pid, SIGKILL);
}

static void kill_all_and_exit(void) {
  kill_groups();
  exit(0);
}

/* Command bytes read so far and not yet handled. */
static unsigned char *inbuf;
static size_t inlen, incap;

static void read_commands(void) {
  if (incap - inlen < CHUNK) {
    incap = incap * 2 > inlen + CHUNK ? incap * 2 : inlen + CHUNK;
    inbuf = realloc(inbuf, incap);
    if (inbuf == NULL) die("realloc");
  }
  ssize_t n = read(0, inbuf + inlen, incap - inlen);
  if (n == 0) kill_all_and_exit();
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return;
    kill_all_and_exit();
  }
  inlen += (size_t)n;
  size_t at = 0;
  while (inlen - at >= 4) {
    uint32_t len = get_u32(inbuf + at);
    if (len > MAX_FRAME) {
      fprintf(stderr, "step-spawner: frame of %u bytes\n", len);
      kill_all_and_exit();
    }
    if (inlen - at - 4 < len) break;
    handle_frame(inbuf + at + 4, len);
    at += 4 + (size_t)len;
  }
  memmove(inbuf, inbuf + at, inlen - at);
  inlen -= at;
}

static void reap(int sigfd) {
  struct signalfd_siginfo info;
  while (read(sigfd, &info, sizeof info) == sizeof info) {
  }
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    struct child *c = find_pid(pid);
    if (c == NULL) continue;
    c->exited = 1;
    c->status = status;
    send_frame(OUT_EXIT, c->id, NULL, 0);
    close_if_done(c);
  }
}

static void read_output(struct child *c, int which) {
  ssize_t n = read(c->fds[which], chunk, sizeof chunk);
  if (n > 0) {
    send_frame(which == 0 ? OUT_STDOUT : OUT_STDERR, c->id, chunk, (size_t)n);
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  close_fd(c, which);
  close_if_done(c);
}

static void ignore_signal(int sig) { (void)sig; }

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--uid") == 0) step_uid = (uid_t)strtoul(argv[i + 1], NULL, 10), has_identity |= 1;
    if (strcmp(argv[i], "--gid") == 0) step_gid = (gid_t)strtoul(argv[i + 1], NULL, 10), has_identity |= 2;
  }
  if (has_identity != 0 && has_identity != 3) {
    fprintf(stderr, "step-spawner: --uid and --gid go together\n");
    return 2;
  }
  /* Caught, not ignored: a caught signal is reset to its default at exec, an ignored one is inherited. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ignore_signal;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGPIPE, &sa, NULL);

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0) die("sigprocmask");
  int sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sigfd < 0) die("signalfd");
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);

  struct pollfd *fds = NULL;
  struct child **owners = NULL;
  int *which = NULL;
  size_t cap = 0;
  while (1) {
    size_t count = 0;
    for (struct child *c = children; c != NULL; c = c->next)
      if (!c->paused) count += (c->fds[0] >= 0) + (c->fds[1] >= 0);
    if (count + 2 > cap) {
      cap = (count + 2) * 2;
      fds = realloc(fds, cap * sizeof *fds);
      owners = realloc(owners, cap * sizeof *owners);
      which = realloc(which, cap * sizeof *which);
      if (fds == NULL || owners == NULL || which == NULL) die("realloc");
    }
    fds[0] = (struct pollfd){.fd = 0, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    size_t n = 2;
    for (struct child *c = children; c != NULL; c = c->next) {
      if (c->paused) continue;
      for (int w = 0; w < 2; w++) {
        if (c->fds[w] < 0) continue;
        fds[n] = (struct pollfd){.fd = c->fds[w], .events = POLLIN};
        owners[n] = c;
        which[n] = w;
        n++;
      }
    }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Output before exits, so a child's last bytes precede its `exit`; commands last (they may free children). */
    for (size_t i = 2; i < n; i++)
      if (fds[i].revents != 0) read_output(owners[i], which[i]);
    if (fds[1].revents != 0) reap(sigfd);
    if (fds[0].revents != 0) read_commands();
  }
}
