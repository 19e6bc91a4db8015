// thumbd-sandbox-exec: runs a tool (ffmpeg, ffprobe) inside the decoder sandbox (sandbox.c). Replaces
// `prlimit --as --cpu --fsize=0 --core=0 -- setpriv --pdeathsig KILL -- tool ...` in the Node launcher.
//
//   thumbd-sandbox-exec [--as BYTES] [--cpu SECONDS] [--read PATH]... [--exec-read PATH]...
//                       [--require landlock,net,scope,seccomp] [--ppid PID] [--no-default-paths] -- tool args...
//   thumbd-sandbox-exec --report      prints what this kernel supports (one line) and exits 0
//
// --read PATH       the tool may read PATH (a file, or a directory and everything beneath)
// --exec-read PATH  the same, and may execute files there
// Unless --no-default-paths, the tool binary and the directories the dynamic loader needs (/lib, /lib64,
// /usr/lib, /usr/lib64: read + execute; /etc/ld.so.cache: read) are added, those that exist.
// --require         mechanisms whose absence is fatal (default: none; log --report at server start)
// --ppid PID        exit at once unless our parent is PID (closes the race before PR_SET_PDEATHSIG)
// --connect-port N  the tool may open TCP sockets and connect to port N only (thumbd's range reader)
//
// Descriptors above 2 are closed before the tool starts. Exit status: 126 (with a message on stderr)
// when the sandbox cannot be entered or the tool cannot be executed, 127 when the tool does not exist;
// otherwise the tool's own.
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_PATHS = 64 };

static const char *const default_exec_dirs[] = { "/lib", "/lib64", "/usr/lib", "/usr/lib64" };

static void usage (const char *message) {
  fprintf(stderr, "thumbd-sandbox-exec: %s\n"
          "usage: thumbd-sandbox-exec [--as BYTES] [--cpu SECONDS] [--read PATH]... [--exec-read PATH]... [--connect-port N]\n"
          "       [--require landlock,net,scope,seccomp] [--ppid PID] [--no-default-paths] -- tool args...\n"
          "       thumbd-sandbox-exec --report\n", message);
  exit(126);
}

static unsigned long long number (const char *text) {
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') usage("not a number");
  return value;
}

static int mechanisms (const char *list) {
  int bits = 0;
  char copy[128];
  snprintf(copy, sizeof copy, "%s", list);
  for (char *save = NULL, *name = strtok_r(copy, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
    if (strcmp(name, "landlock") == 0) bits |= THUMBD_SANDBOX_LANDLOCK;
    else if (strcmp(name, "net") == 0) bits |= THUMBD_SANDBOX_LANDLOCK_NET;
    else if (strcmp(name, "scope") == 0) bits |= THUMBD_SANDBOX_LANDLOCK_SCOPE;
    else if (strcmp(name, "seccomp") == 0) bits |= THUMBD_SANDBOX_SECCOMP;
    else usage("--require takes landlock, net, scope, seccomp");
  }
  return bits;
}

static void add (const char **list, int *count, const char *path) {
  if (*count >= MAX_PATHS - 1) usage("too many paths");
  list[(*count)++] = path;
  list[*count] = NULL;
}

/* The file execv() will run: the tool itself if it has a slash, else the first match on PATH. The
 * search happens here, before Landlock, which would hide the other PATH directories. */
static const char *resolve (const char *tool, char *buffer, size_t size) {
  if (strchr(tool, '/') != NULL) return tool;
  const char *path = getenv("PATH");
  if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *dir = path; ; ) {
    size_t length = strcspn(dir, ":");
    if (snprintf(buffer, size, "%.*s/%s", (int)length, length > 0 ? dir : ".", tool) < (int)size &&
        access(buffer, X_OK) == 0) return buffer;
    if (dir[length] == '\0') return NULL;
    dir += length + 1;
  }
}

int main (int argc, char **argv) {
  pid_t parent = getppid();
  struct thumbd_sandbox sandbox = { .allow_exec = 1 };
  const char *reads[MAX_PATHS] = { NULL }, *execs[MAX_PATHS] = { NULL };
  int read_count = 0, exec_count = 0, defaults = 1, i = 1;
  long expected_parent = 0;

  if (argc == 2 && strcmp(argv[1], "--report") == 0) {
    char line[256];
    thumbd_sandbox_report(line, sizeof line);
    printf("%s\n", line);
    return 0;
  }
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *option = argv[i];
    if (strcmp(option, "--no-default-paths") == 0) { defaults = 0; continue; }
    if (i + 1 >= argc) usage("option without a value");
    const char *value = argv[++i];
    if (strcmp(option, "--as") == 0) sandbox.address_space_bytes = number(value);
    else if (strcmp(option, "--cpu") == 0) sandbox.cpu_seconds = number(value);
    else if (strcmp(option, "--read") == 0) add(reads, &read_count, value);
    else if (strcmp(option, "--exec-read") == 0) add(execs, &exec_count, value);
    else if (strcmp(option, "--require") == 0) sandbox.require = mechanisms(value);
    else if (strcmp(option, "--ppid") == 0) expected_parent = (long)number(value);
    else if (strcmp(option, "--connect-port") == 0) sandbox.connect_port = (unsigned)number(value);
    else usage("unknown option");
  }
  if (i + 1 >= argc) usage("no tool after --");
  char **tool_argv = argv + i + 1;

  char found[PATH_MAX];
  const char *tool = resolve(tool_argv[0], found, sizeof found);
  if (tool == NULL) { fprintf(stderr, "thumbd-sandbox-exec: %s: not found\n", tool_argv[0]); return 127; }
  if (defaults) {
    add(execs, &exec_count, tool);
    for (size_t d = 0; d < sizeof default_exec_dirs / sizeof default_exec_dirs[0]; d++) {
      if (access(default_exec_dirs[d], F_OK) == 0) add(execs, &exec_count, default_exec_dirs[d]);
    }
    if (access("/etc/ld.so.cache", F_OK) == 0) add(reads, &read_count, "/etc/ld.so.cache");
  }
  sandbox.read_paths = reads;
  sandbox.exec_paths = execs;

  /* The tool gets stdin, stdout and stderr only: Landlock does not check descriptors already open. */
  close_range(3, ~0U, 0);

  char err[1024];
  if (thumbd_sandbox_enter(&sandbox, err, sizeof err) < 0) {
    fprintf(stderr, "thumbd-sandbox-exec: cannot enter the sandbox: %s\n", err);
    return 126;
  }
  /* A degraded sandbox (return > 0) is not reported here: stderr is the tool's, which the server
   * parses. The server logs `--report` once at start and decides with --require. */

  /* Our parent may have died before PR_SET_PDEATHSIG took effect: we would then never be killed. */
  if (getppid() != parent || (expected_parent > 0 && getppid() != (pid_t)expected_parent)) {
    fprintf(stderr, "thumbd-sandbox-exec: parent gone\n");
    return 126;
  }
  execv(tool, tool_argv);
  int error = errno;
  fprintf(stderr, "thumbd-sandbox-exec: %s: %s\n", tool, strerror(error));
  return error == ENOENT ? 127 : 126;
}
