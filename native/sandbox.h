// The decoder sandbox: what an ffmpeg/ffprobe process may still do once it has started reading a hostile
// upload. One implementation, used by both ways of starting a tool:
//   - the zygote (native/ffmpeg-zygote.c): each forked child calls thumbd_sandbox_enter() just before the
//     tool's main(), with read access to the job's input file only (the libraries are already mapped);
//   - thumbd-sandbox-exec (sandbox-exec.c): enters the sandbox, then execs the tool, with read and execute
//     access to the tool binary and the library directories as well.
// See NOTES.md for what each mechanism blocks, what was measured, and the caveats.
#ifndef THUMBD_SANDBOX_H
#define THUMBD_SANDBOX_H

#include <stddef.h>

/* Mechanisms, as bits: thumbd_sandbox_enter() returns those it could not apply (0 when complete), and
 * `require` names those whose absence is fatal. */
enum {
  THUMBD_SANDBOX_LANDLOCK = 1 << 0,        /* filesystem rules (ABI >= 1) */
  THUMBD_SANDBOX_LANDLOCK_NET = 1 << 1,    /* TCP bind/connect denied (ABI >= 4) */
  THUMBD_SANDBOX_LANDLOCK_SCOPE = 1 << 2,  /* signals, abstract unix sockets (ABI >= 6) */
  THUMBD_SANDBOX_SECCOMP = 1 << 3          /* the syscall filter */
};

struct thumbd_sandbox {
  unsigned long long address_space_bytes;  /* RLIMIT_AS; 0 keeps the inherited limit */
  unsigned long long cpu_seconds;          /* RLIMIT_CPU; 0 keeps the inherited limit */
  /* RLIMIT_FSIZE and RLIMIT_CORE are always set to 0: output goes to inherited pipes only. */

  /* NULL-terminated lists (either may be NULL) of files or directories, taken beneath (a directory
   * covers everything under it). read_paths: read only (Landlock READ_FILE, and READ_DIR for a
   * directory). exec_paths: the same plus EXECUTE, for the exec wrapper's tool binary and library
   * directories. Every path must exist when the sandbox is entered. Nothing else on the filesystem
   * can be opened afterwards, and nothing at all can be written, created, removed or renamed. */
  const char *const *read_paths;
  const char *const *exec_paths;

  /* 0: no sockets at all. Otherwise the one TCP port the tool may connect to (thumbd's loopback range
   * reader, src/sources/range-reader.ts): socket() is allowed for AF_INET stream sockets only, and
   * Landlock allows a TCP connect to this port and no other, so enter() fails (-1) where Landlock has no
   * TCP rules (ABI < 4) rather than open the network. */
  unsigned connect_port;

  int allow_exec;  /* execve/execveat allowed (the wrapper); 0 in the zygote */
  int require;     /* THUMBD_SANDBOX_* bits whose absence makes enter() fail (-1) */
};

/*
 * Puts the calling process into the sandbox, irreversibly. Call it while the process has a single
 * thread (in a child right after fork(), or before exec): Landlock, seccomp, the capability sets and
 * no_new_privs are per-thread, and threads that already exist would stay outside.
 *
 * Open every file the tool needs from outside `read_paths` (/dev/null as stdin, the output pipes)
 * and close what it must not have (close_range) BEFORE calling: descriptors already open are not
 * checked by Landlock.
 *
 * Sets PR_SET_PDEATHSIG(SIGKILL); the caller must then check getppid() against the parent it expects
 * (the parent may have died before the call).
 *
 * Returns -1 if the process must not run the tool (a step failed, or a mechanism in `require` is
 * missing); otherwise the THUMBD_SANDBOX_* bits of mechanisms this kernel lacks (0: all applied).
 * Whenever it returns non-zero, `err` (if not NULL) says what is missing or what failed. Every
 * other step is applied even after a failure, so a caller that ignores -1 still gets what was possible.
 */
int thumbd_sandbox_enter (const struct thumbd_sandbox *sandbox, char *err, size_t errlen);

/*
 * Writes one line describing what this kernel supports, e.g.
 *   "landlock ABI 7 (fs, tcp, scopes); seccomp filter yes"
 * for the server's start-up log and /health. Returns the THUMBD_SANDBOX_* bits that enter() would
 * report missing. Has no side effect on the calling process.
 */
int thumbd_sandbox_report (char *buf, size_t len);

#endif
