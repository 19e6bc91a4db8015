// A fork server for ffmpeg/ffprobe, loaded into the tool with LD_PRELOAD (see workers/tools/zygote.ts for the
// Node side and docs/architecture.md for the figures).
//
// Why: Debian's ffmpeg links ~215 shared libraries with BIND_NOW, so every run spends ~60 ms of CPU in the
// dynamic loader and library constructors before main() (of ~210 ms for a 1080p frame). Loaded once here,
// then fork()ed per job, each run starts at main() with all of that done.
//
// With THUMBD_ZYGOTE set to its argv[0] (not to a wrapper such as setpriv that execs it with the same
// environment), the tool does not run its main() but serves frames on stdio:
//   in  (stdin):  [id u32][type u8][length u32][payload]   1 RUN: argv as NUL-terminated strings
//                                                          2 SIGNAL: signal number (i32)
//   out (stdout): [id u32][type u8][length u32][payload]   1 stdout bytes, 2 stderr bytes,
//                                                          3 EXIT: code (i32, -1 if killed), signal (i32)
//                                                          4 ERROR: JSON { code, message }
//                                                          3 RUN_SANDBOXED: [port u32][count u32][count paths, each
//                                                            NUL-terminated] then argv as for RUN; the tool may read only
//                                                            those paths, and connect to that TCP port only (0: none)
// Each child gets /dev/null for stdin, pipes for stdout/stderr, and enters the decoder sandbox (sandbox.c:
// the limits from THUMBD_ZYGOTE_AS and THUMBD_ZYGOTE_CPU as prlimit gives the spawned tools, no
// capabilities, Landlock, seccomp, SIGKILL should the zygote die). THUMBD_ZYGOTE_REQUIRE: the
// THUMBD_SANDBOX_* bits whose absence makes every run fail (126) rather than run less confined. When stdin
// closes, every child is killed and the zygote exits. Without THUMBD_ZYGOTE the tool runs as usual.
#define _GNU_SOURCE
#include "sandbox.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OUT_STDOUT = 1, OUT_STDERR = 2, OUT_EXIT = 3, OUT_ERROR = 4 };
enum { IN_RUN = 1, IN_SIGNAL = 2, IN_RUN_SANDBOXED = 3 };
enum { MAX_READ_PATHS = 16 };
enum { HEADER_BYTES = 9, MAX_TOOLS = 16, MAX_REQUEST_BYTES = 1 << 20, READ_BYTES = 64 * 1024, MAX_SPLICED_BYTES = 1 << 20 };

typedef int (*main_fn)(int, char **, char **);

struct tool {
  int used;
  uint32_t id;
  pid_t pid;
  int out, err;  /* pipe ends, -1 once closed */
  int reaped, status;
};

static main_fn tool_main;
static struct tool tools[MAX_TOOLS];
static pid_t zygote_pid;
static rlim_t address_space, cpu_seconds;
static int sandbox_require;
static char tool_name[16];  /* the kernel's limit for a thread name */

static void write_all (const struct iovec *parts, int count) {
  struct iovec iov[2];
  memcpy(iov, parts, sizeof(struct iovec) * count);
  while (count > 0) {
    ssize_t n = writev(STDOUT_FILENO, iov, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(0);  /* the thread that reads us is gone */
    }
    while (count > 0 && (size_t)n >= iov[0].iov_len) {
      n -= iov[0].iov_len;
      iov[0] = iov[1];
      count--;
    }
    if (count > 0) {
      iov[0].iov_base = (char *)iov[0].iov_base + n;
      iov[0].iov_len -= n;
    }
  }
}

static void send_frame (uint32_t id, uint8_t type, const void *payload, uint32_t length) {
  unsigned char header[HEADER_BYTES];
  memcpy(header, &id, 4);  /* x86-64 and arm64 are little-endian, as the protocol */
  header[4] = type;
  memcpy(header + 5, &length, 4);
  struct iovec parts[2] = { { header, HEADER_BYTES }, { (void *)payload, length } };
  write_all(parts, length > 0 && payload != NULL ? 2 : 1);
}

static void send_error (uint32_t id, const char *code, const char *message) {
  char json[256];
  int n = snprintf(json, sizeof json, "{\"code\":\"%s\",\"message\":\"%s\"}", code, message);
  send_frame(id, OUT_ERROR, json, (uint32_t)n);
  int32_t exit_payload[2] = { -1, 0 };
  send_frame(id, OUT_EXIT, exit_payload, sizeof exit_payload);
}

static rlim_t env_number (const char *name) {
  const char *value = getenv(name);
  return value == NULL ? 0 : (rlim_t)strtoull(value, NULL, 10);
}

/* In the child: become the tool, as prlimit + setpriv + exec would have made it. */
static void become_tool (int out, int err, int argc, char **argv, const char *const *read_paths, unsigned connect_port) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != zygote_pid) _exit(137);
  prctl(PR_SET_NAME, tool_name);
  int null = open("/dev/null", O_RDONLY);
  if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) _exit(126);
  /* The zygote's own descriptors (the signalfd, other runs' pipes) are not the tool's. */
  if (close_range(3, ~0U, 0) != 0) for (int fd = 3; fd < 1024; fd++) close(fd);  /* kernels before 5.9 */
  /* Last: /dev/null and the pipes are open, the zygote's descriptors closed (Landlock does not look at
   * descriptors already open, and /dev is not readable after). */
  struct thumbd_sandbox sandbox = {
    .address_space_bytes = address_space, .cpu_seconds = cpu_seconds,
    .read_paths = read_paths, .connect_port = connect_port, .allow_exec = 0, .require = sandbox_require
  };
  char message[512];
  if (thumbd_sandbox_enter(&sandbox, message, sizeof message) < 0) {
    dprintf(STDERR_FILENO, "thumbd sandbox: %s\n", message);
    _exit(126);
  }
  if (getppid() != zygote_pid) _exit(137);  /* enter() set PR_SET_PDEATHSIG again; same check */
  exit(tool_main(argc, argv, environ));
}

static void run (uint32_t id, char *payload, uint32_t length, int sandboxed) {
  struct tool *slot = NULL;
  for (int i = 0; i < MAX_TOOLS && slot == NULL; i++) if (!tools[i].used) slot = &tools[i];
  if (slot == NULL) return send_error(id, "EAGAIN", "too many tools at once");
  /* RUN_SANDBOXED: the paths the tool may read come first. (RUN: none at all, which fails unless
   * the input is a pipe.) */
  const char *read_paths[MAX_READ_PATHS + 1] = { NULL };
  uint32_t connect_port = 0;
  if (sandboxed) {
    uint32_t count;
    if (length < 8) return send_error(id, "EINVAL", "malformed paths");
    memcpy(&connect_port, payload, 4);
    memcpy(&count, payload + 4, 4);
    payload += 8;
    length -= 8;
    if (connect_port > 65535) return send_error(id, "EINVAL", "bad port");
    if (count > MAX_READ_PATHS) return send_error(id, "EINVAL", "too many paths");
    for (uint32_t i = 0; i < count; i++) {
      char *end = memchr(payload, '\0', length);
      if (end == NULL) return send_error(id, "EINVAL", "malformed paths");
      read_paths[i] = payload;
      length -= (uint32_t)(end + 1 - payload);
      payload = end + 1;
    }
  }
  if (length == 0 || payload[length - 1] != '\0') return send_error(id, "EINVAL", "malformed argv");
  int argc = 0;
  for (uint32_t i = 0; i < length; i++) if (payload[i] == '\0') argc++;
  char **argv = calloc(argc + 1, sizeof(char *));
  if (argv == NULL) return send_error(id, "ENOMEM", "out of memory");
  char *arg = payload;
  for (int i = 0; i < argc; i++) { argv[i] = arg; arg += strlen(arg) + 1; }

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) { free(argv); return send_error(id, "EMFILE", "no pipe"); }
  if (pipe2(err, O_CLOEXEC) != 0) { close(out[0]); close(out[1]); free(argv); return send_error(id, "EMFILE", "no pipe"); }
  pid_t pid = fork();
  if (pid == 0) become_tool(out[1], err[1], argc, argv, read_paths, connect_port);
  free(argv);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return send_error(id, "EAGAIN", "fork failed");
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  *slot = (struct tool){ .used = 1, .id = id, .pid = pid, .out = out[0], .err = err[0] };
}

static void deliver_signal (uint32_t id, const char *payload, uint32_t length) {
  int32_t signo;
  if (length != sizeof signo) return;
  memcpy(&signo, payload, sizeof signo);
  for (int i = 0; i < MAX_TOOLS; i++) {
    if (tools[i].used && tools[i].id == id && !tools[i].reaped) kill(tools[i].pid, signo);
  }
}

static void kill_all_and_exit (void) {
  for (int i = 0; i < MAX_TOOLS; i++) if (tools[i].used && !tools[i].reaped) kill(tools[i].pid, SIGKILL);
  _exit(0);
}

/* 0 once splice() was refused here (stdout not a pipe or socket): the bytes are copied through this process. */
static int splice_works = 1;

/* `length` bytes of the pipe `fd` (that many are in it, FIONREAD said) to stdout, after the header that announced
 * them. splice(): the kernel hands the pipe's pages on to our stdout (the socket to the pool thread) without this
 * process reading and writing them again, which a decoder's pixels cost 64 KB at a time. */
static void move_bytes (int fd, uint32_t length) {
  static char buffer[READ_BYTES];
  while (length > 0 && splice_works) {
    ssize_t n = splice(fd, NULL, STDOUT_FILENO, NULL, length, SPLICE_F_MOVE);
    if (n > 0) length -= (uint32_t)n;
    else if (n < 0 && errno == EINTR) continue;
    else if (n < 0 && errno == EPIPE) _exit(0);  /* the thread that reads us is gone */
    else splice_works = 0;
  }
  while (length > 0) {
    ssize_t n = read(fd, buffer, length < sizeof buffer ? length : sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    /* Cannot be (the bytes were there), but the frame must stay as long as its header says. */
    if (n <= 0) n = length < sizeof buffer ? length : sizeof buffer, memset(buffer, 0, (size_t)n);
    struct iovec part = { buffer, (size_t)n };
    write_all(&part, 1);
    length -= (uint32_t)n;
  }
}

/* Relays what a child wrote, as one frame of what its pipe holds; closes the pipe at its end. */
static void relay (struct tool *t, int *fd, uint8_t type) {
  static char buffer[READ_BYTES];
  int available = 0;
  if (ioctl(*fd, FIONREAD, &available) == 0 && available > 0) {
    uint32_t length = available < MAX_SPLICED_BYTES ? (uint32_t)available : MAX_SPLICED_BYTES;
    send_frame(t->id, type, NULL, length);
    move_bytes(*fd, length);
    return;
  }
  ssize_t n = read(*fd, buffer, sizeof buffer);
  if (n > 0) send_frame(t->id, type, buffer, (uint32_t)n);
  else if (n == 0 || (errno != EAGAIN && errno != EINTR)) { close(*fd); *fd = -1; }
}

static void reap (void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < MAX_TOOLS; i++) {
      if (tools[i].used && tools[i].pid == pid) { tools[i].reaped = 1; tools[i].status = status; }
    }
  }
}

/* A tool is done once it has exited and both its pipes are drained: its output always precedes its exit. */
static void finish_done_tools (void) {
  for (int i = 0; i < MAX_TOOLS; i++) {
    struct tool *t = &tools[i];
    if (!t->used || !t->reaped || t->out >= 0 || t->err >= 0) continue;
    int32_t exit_payload[2] = {
      WIFEXITED(t->status) ? WEXITSTATUS(t->status) : -1,
      WIFSIGNALED(t->status) ? WTERMSIG(t->status) : 0
    };
    send_frame(t->id, OUT_EXIT, exit_payload, sizeof exit_payload);
    t->used = 0;
  }
}

/* Takes every complete request out of the buffer; returns how many bytes remain. */
static size_t take_requests (char *buffer, size_t filled) {
  size_t at = 0;
  while (filled - at >= HEADER_BYTES) {
    uint32_t id, length;
    memcpy(&id, buffer + at, 4);
    memcpy(&length, buffer + at + 5, 4);
    if (length > MAX_REQUEST_BYTES - HEADER_BYTES) kill_all_and_exit();
    if (filled - at < HEADER_BYTES + length) break;
    char *payload = buffer + at + HEADER_BYTES;
    if (buffer[at + 4] == IN_RUN || buffer[at + 4] == IN_RUN_SANDBOXED) run(id, payload, length, buffer[at + 4] == IN_RUN_SANDBOXED);
    else if (buffer[at + 4] == IN_SIGNAL) deliver_signal(id, payload, length);
    at += HEADER_BYTES + length;
  }
  memmove(buffer, buffer + at, filled - at);
  return filled - at;
}

static int serve (int argc, char **argv, char **envp) {
  (void)argc; (void)argv; (void)envp;
  zygote_pid = getpid();
  address_space = env_number("THUMBD_ZYGOTE_AS");
  cpu_seconds = env_number("THUMBD_ZYGOTE_CPU");
  sandbox_require = (int)env_number("THUMBD_ZYGOTE_REQUIRE");
  /* Other processes of our uid (a sandboxed child on a kernel without Landlock, in particular) can no
   * longer open /proc/<zygote>/fd/N (other jobs' pipes), environ or mem: those need ptrace access, which
   * a non-dumpable process grants only to CAP_SYS_PTRACE. Inherited by the children. */
  prctl(PR_SET_DUMPABLE, 0);
  /* The children see the environment the tool would have had without us. */
  const char *preload = getenv("THUMBD_ZYGOTE_PRELOAD");
  if (preload != NULL && preload[0] != '\0') setenv("LD_PRELOAD", preload, 1);
  else unsetenv("LD_PRELOAD");
  unsetenv("THUMBD_ZYGOTE");
  unsetenv("THUMBD_ZYGOTE_PRELOAD");
  unsetenv("THUMBD_ZYGOTE_AS");
  unsetenv("THUMBD_ZYGOTE_CPU");
  unsetenv("THUMBD_ZYGOTE_REQUIRE");
  /* "ffmpeg-zygote" in ps and top; its children take back the tool's own name. */
  prctl(PR_GET_NAME, tool_name);
  char zygote_name[32];
  snprintf(zygote_name, sizeof zygote_name, "%.8s-zygote", tool_name);
  prctl(PR_SET_NAME, zygote_name);
  signal(SIGPIPE, SIG_IGN);

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int children = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  char *requests = malloc(MAX_REQUEST_BYTES);
  if (children < 0 || requests == NULL) return 70;
  size_t filled = 0;

  for (;;) {
    struct pollfd fds[2 + 2 * MAX_TOOLS];
    struct { struct tool *t; int *fd; uint8_t type; } owners[2 * MAX_TOOLS];
    int count = 0;
    fds[count++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
    fds[count++] = (struct pollfd){ .fd = children, .events = POLLIN };
    for (int i = 0; i < MAX_TOOLS; i++) {
      struct tool *t = &tools[i];
      if (!t->used) continue;
      if (t->out >= 0) { owners[count - 2] = (typeof(owners[0])){ t, &t->out, OUT_STDOUT }; fds[count++] = (struct pollfd){ .fd = t->out, .events = POLLIN }; }
      if (t->err >= 0) { owners[count - 2] = (typeof(owners[0])){ t, &t->err, OUT_STDERR }; fds[count++] = (struct pollfd){ .fd = t->err, .events = POLLIN }; }
    }
    if (poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      kill_all_and_exit();
    }
    if (fds[1].revents != 0) {
      struct signalfd_siginfo info;
      while (read(children, &info, sizeof info) == sizeof info) {}
      reap();
    }
    for (int i = 2; i < count; i++) {
      if (fds[i].revents != 0) relay(owners[i - 2].t, owners[i - 2].fd, owners[i - 2].type);
    }
    finish_done_tools();
    if (fds[0].revents != 0) {
      ssize_t n = read(STDIN_FILENO, requests + filled, MAX_REQUEST_BYTES - filled);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) kill_all_and_exit();
      if (n > 0) filled = take_requests(requests, filled + (size_t)n);
    }
  }
}

/* glibc calls this from _start with the program's main; we decide which main runs. */
int __libc_start_main (main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
  typeof(&__libc_start_main) next = (typeof(&__libc_start_main))dlsym(RTLD_NEXT, "__libc_start_main");
  tool_main = main;
  const char *mode = getenv("THUMBD_ZYGOTE");
  int zygote = mode != NULL && argc > 0 && strcmp(mode, argv[0]) == 0;
  return next(zygote ? serve : main, argc, argv, init, fini, rtld_fini, stack_end);
}
