// The decoder sandbox (see sandbox.h for the contract, NOTES.md for measurements and caveats).
// Order, and why:
//   1. rlimits            - lowering limits needs no privilege; done first so nothing below runs unlimited.
//   2. capabilities       - root must lose CAP_DAC_OVERRIDE, CAP_SYS_PTRACE, CAP_KILL, ... Before 3 and 4,
//                           which the kernel resets on some credential changes (not on a drop; no matter).
//   3. pdeathsig          - SIGKILL when the parent (zygote, Node launcher) dies.
//   4. dumpable 0         - other processes of our uid cannot ptrace us or open /proc/<us>/{mem,fd,environ}.
//   5. no_new_privs       - needed to install Landlock and seccomp without CAP_SYS_ADMIN, and exec can no
//                           longer grant anything (setuid bits, file capabilities).
//   6. Landlock           - filesystem, TCP and scope rules; its own syscalls must run before seccomp...
//   7. seccomp            - ...which comes last, so the filter need not allow anything this function uses.
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define THUMBD_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "thumbd sandbox: only x86-64 and little-endian arm64 are supported"
#endif

/* Landlock bits newer than Debian 12's kernel headers (6.1, ABI 2). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#define THUMBD_RULE_NET_PORT 2  /* LANDLOCK_RULE_NET_PORT, ABI 4 */
struct net_port_attr {  /* struct landlock_net_port_attr */
  uint64_t allowed_access, port;
};
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
/* struct landlock_ruleset_attr as of ABI 6; older kernels accept it as long as the fields they do not
 * know are zero. Our own name, since the 6.1 header defines the one-field version. */
struct ruleset_attr {
  uint64_t handled_access_fs, handled_access_net, scoped;
};
/* The newest Landlock ABI this file knows. On a newer kernel, access rights added since are probed and
 * handled too (denied: no rule grants them). */
#ifndef THUMBD_LANDLOCK_KNOWN_ABI
#define THUMBD_LANDLOCK_KNOWN_ABI 7
#endif
/* Syscalls newer than the 6.1 headers that we deny (same number on every architecture since 5.x). */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#define __NR_removexattrat 466
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif

/* Appends "; message" to err (the first message without the separator). */
static void note (char *err, size_t errlen, const char *format, ...) {
  if (err == NULL || errlen == 0) return;
  size_t used = strnlen(err, errlen);
  if (used + 3 >= errlen) return;
  if (used > 0) { memcpy(err + used, "; ", 3); used += 2; }
  va_list args;
  va_start(args, format);
  vsnprintf(err + used, errlen - used, format, args);
  va_end(args);
}

static int landlock_abi (void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;  /* ENOSYS: not built in; EOPNOTSUPP: disabled at boot */
}

/* The probe the seccomp(2) page suggests: EFAULT (bad pointer) means filters are supported, EINVAL not. */
static int seccomp_filters_supported (void) {
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) != 0 && errno == EFAULT;
}

static int missing_for_abi (int abi) {
  if (abi < 1) return THUMBD_SANDBOX_LANDLOCK | THUMBD_SANDBOX_LANDLOCK_NET | THUMBD_SANDBOX_LANDLOCK_SCOPE;
  return (abi < 4 ? THUMBD_SANDBOX_LANDLOCK_NET : 0) | (abi < 6 ? THUMBD_SANDBOX_LANDLOCK_SCOPE : 0);
}

int thumbd_sandbox_report (char *buf, size_t len) {
  int abi = landlock_abi(), seccomp = seccomp_filters_supported();
  int missing = missing_for_abi(abi) | (seccomp ? 0 : THUMBD_SANDBOX_SECCOMP);
  if (abi > 0) {
    snprintf(buf, len, "landlock ABI %d (fs%s%s); seccomp filter %s", abi, abi >= 4 ? ", tcp" : "",
             abi >= 6 ? ", scopes" : "", seccomp ? "yes" : "no");
  } else {
    snprintf(buf, len, "landlock unavailable (%s); seccomp filter %s", strerror(-abi), seccomp ? "yes" : "no");
  }
  return missing;
}

static int limit (int resource, unsigned long long value) {
  struct rlimit r = { (rlim_t)value, (rlim_t)value };
  return setrlimit(resource, &r);
}

/* Root without capabilities is an ordinary user that happens to own root's files (see NOTES.md). */
static int drop_capabilities (void) {
  /* The bounding set limits what an exec could grant. Dropping from it needs CAP_SETPCAP, which a
   * non-root server does not have: EPERM is then fine, since no_new_privs below already keeps exec from
   * granting anything. EINVAL marks the end of the capabilities this kernel knows. Stop at either. */
  for (int cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) break;
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);  /* EINVAL before 4.3: nothing to clear */
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  return (int)syscall(SYS_capset, &header, data);  /* dropping everything is always allowed */
}

static int landlock_rule (int ruleset, const char *path, uint64_t access, uint64_t handled, char *err, size_t errlen) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    note(err, errlen, "landlock: %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  /* Directory rights on a file are EINVAL; rights the kernel does not handle are EINVAL too. */
  struct landlock_path_beneath_attr rule = {
    .allowed_access = (access | (S_ISDIR(st.st_mode) ? LANDLOCK_ACCESS_FS_READ_DIR : 0)) & handled,
    .parent_fd = fd
  };
  int rc = (int)syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  if (rc != 0) note(err, errlen, "landlock: rule for %s: %s", path, strerror(errno));
  close(fd);
  return rc;
}

/* Landlock numbers the rights of each field contiguously: the ones after `known` that the kernel
 * accepts, one at a time. field: 0 fs, 1 net, 2 scoped. */
static uint64_t newer_rights (uint64_t known, int field) {
  for (int bit = known != 0 ? 64 - __builtin_clzll(known) : 0; bit < 64; bit++) {
    struct ruleset_attr probe = { 0, 0, 0 };
    *(field == 0 ? &probe.handled_access_fs : field == 1 ? &probe.handled_access_net : &probe.scoped) = 1ULL << bit;
    int fd = (int)syscall(__NR_landlock_create_ruleset, &probe, sizeof probe, 0);
    if (fd < 0) break;
    close(fd);
    known |= 1ULL << bit;
  }
  return known;
}

/* Returns 0, or -1 after noting why in err. */
static int enter_landlock (const struct thumbd_sandbox *sandbox, int abi, char *err, size_t errlen) {
  /* Handle every filesystem access the kernel knows: what is handled and not granted by a rule below
   * is denied (write, truncate, create and remove anything, device ioctls, execute outside exec_paths). */
  int known = abi < THUMBD_LANDLOCK_KNOWN_ABI ? abi : THUMBD_LANDLOCK_KNOWN_ABI;
  struct ruleset_attr attr = { .handled_access_fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1 };  /* ABI 1 */
  if (known >= 2) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
  if (known >= 3) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (known >= 5) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  /* TCP handled with no rule: no bind, no connect. */
  if (known >= 4) attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  /* No signals to, and no abstract unix socket connects into, processes outside this domain. */
  if (known >= 6) attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
  if (abi > known) {  /* a kernel newer than this file: whatever it added is denied as well */
    attr.handled_access_fs = newer_rights(attr.handled_access_fs, 0);
    attr.handled_access_net = newer_rights(attr.handled_access_net, 1);
    attr.scoped = newer_rights(attr.scoped, 2);
  }

  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) { note(err, errlen, "landlock: create ruleset: %s", strerror(errno)); return -1; }
  int rc = 0;
  const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE;
  for (const char *const *p = sandbox->read_paths; p != NULL && *p != NULL; p++) {
    rc |= landlock_rule(ruleset, *p, read, attr.handled_access_fs, err, errlen);
  }
  for (const char *const *p = sandbox->exec_paths; p != NULL && *p != NULL; p++) {
    rc |= landlock_rule(ruleset, *p, read | LANDLOCK_ACCESS_FS_EXECUTE, attr.handled_access_fs, err, errlen);
  }
  /* The range reader's port: TCP connect there, and nowhere else (bind stays denied). */
  if (sandbox->connect_port != 0) {
    struct net_port_attr port = { .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP, .port = sandbox->connect_port };
    if (known < 4 || syscall(__NR_landlock_add_rule, ruleset, THUMBD_RULE_NET_PORT, &port, 0) != 0) {
      note(err, errlen, "landlock: no rule for TCP port %u: %s", sandbox->connect_port, known < 4 ? "ABI < 4" : strerror(errno));
      rc = -1;
    }
  }
  /* A path that could not be added is not restricted "less": it is just unreadable. Restrict anyway. */
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    note(err, errlen, "landlock: restrict self: %s", strerror(errno));
    rc = -1;
  }
  close(ruleset);
  return rc;
}

/* ---- seccomp: a denylist, so that ffmpeg's ~215 libraries keep working (NOTES.md lists what they use) ---- */

/* How one syscall is treated; everything not listed is allowed. */
struct rule {
  uint32_t nr;
  enum { ERRNO, CLONE, SELF, IOCTL, TCP_SOCKET, NO_FASTOPEN } kind;
  uint32_t error;        /* ERRNO: the errno returned */
  int which_arg;         /* SELF: argument that must equal `which` (-1: none)... */
  uint32_t which;
  int pid_arg, allow_zero;  /* ...and argument that must be our pid (or 0, "myself", if allow_zero) */
};

enum { FILTER_MAX = 512, RULES_MAX = 160 };
#ifndef THUMBD_FILTER_LEAF
#define THUMBD_FILTER_LEAF 4  /* rules compared in a row at the bottom of the tree (tests set it huge: a list) */
#endif
struct filter { struct sock_filter ins[FILTER_MAX]; unsigned count; };

static void op (struct filter *f, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  if (f->count < FILTER_MAX) f->ins[f->count] = (struct sock_filter){ code, jt, jf, k };
  f->count++;  /* overflow is detected before install */
}
#define LOAD(f, offset) op(f, BPF_LD | BPF_W | BPF_ABS, (offset), 0, 0)
#define RET(f, value) op(f, BPF_RET | BPF_K, (value), 0, 0)
#define ARG_LOW(i) (offsetof(struct seccomp_data, args) + 8 * (i))  /* little-endian: low 32 bits first */
#define DENY(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* One rule, with A holding the syscall number: "if A == nr { decide }". Every decision ends in a return,
 * so A still holds the number when the rule does not match. The kernel reads the arguments checked
 * here as 32-bit values, so their low half is what it acts on. */
static void emit_rule (struct filter *f, const struct rule *r, uint32_t self) {
  switch (r->kind) {
  case ERRNO:
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 1);
    RET(f, DENY(r->error));
    break;
  case CLONE:  /* threads only (CLONE_THREAD), and no namespace flags */
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 5);
    LOAD(f, ARG_LOW(0));
    op(f, BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 2);
    op(f, BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET, 1, 0);
    RET(f, SECCOMP_RET_ALLOW);
    RET(f, DENY(EPERM));
    break;
  case IOCTL:  /* TIOCSTI pushes input into a terminal that an inherited descriptor might be */
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 4);
    LOAD(f, ARG_LOW(1));
    op(f, BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 0, 1);
    RET(f, DENY(EPERM));
    RET(f, SECCOMP_RET_ALLOW);
    break;
  case TCP_SOCKET:  /* socket(AF_INET, SOCK_STREAM [| NONBLOCK | CLOEXEC], 0 or IPPROTO_TCP) only: what
                     * Landlock's port rule governs (not UDP, SCTP, MPTCP, raw, unix or netlink) */
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 10);
    LOAD(f, ARG_LOW(0));
    op(f, BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 0, 6);
    LOAD(f, ARG_LOW(1));
    op(f, BPF_ALU | BPF_AND | BPF_K, ~(uint32_t)(SOCK_NONBLOCK | SOCK_CLOEXEC), 0, 0);
    op(f, BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3);
    LOAD(f, ARG_LOW(2));
    op(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
    op(f, BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0);
    RET(f, DENY(EPERM));
    RET(f, SECCOMP_RET_ALLOW);
    break;
  case NO_FASTOPEN:  /* MSG_FASTOPEN connects from sendto/sendmsg without connect(), which is all Landlock's
                      * port rule sees (landlock-lsm/linux#41): refused, whatever the flags' argument */
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, 4);
    LOAD(f, ARG_LOW(r->which_arg));
    op(f, BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 0, 1);
    RET(f, DENY(EPERM));
    RET(f, SECCOMP_RET_ALLOW);
    break;
  case SELF: {  /* [ld which; jeq which else deny;] ld pid; jeq self -> allow; [jeq 0 -> allow;] deny; allow */
    uint8_t zero = r->allow_zero ? 1 : 0;
    op(f, BPF_JMP | BPF_JEQ | BPF_K, r->nr, 0, (uint8_t)((r->which_arg >= 0 ? 2 : 0) + 4 + zero));
    if (r->which_arg >= 0) {
      LOAD(f, ARG_LOW(r->which_arg));
      op(f, BPF_JMP | BPF_JEQ | BPF_K, r->which, 0, (uint8_t)(2 + zero));
    }
    LOAD(f, ARG_LOW(r->pid_arg));
    op(f, BPF_JMP | BPF_JEQ | BPF_K, self, (uint8_t)(1 + zero), 0);
    if (zero) op(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
    RET(f, DENY(EPERM));
    RET(f, SECCOMP_RET_ALLOW);
    break;
  }
  }
}

/* A binary search on the syscall number rather than a list of ~90 comparisons. Not for the run time
 * (the kernel caches "always allowed" per syscall number), but for the install: building that cache
 * emulates the filter for every syscall number: ~5 us per comparison in a linear list. Measured for
 * this policy: ~190 us to install as a list, ~105 us as a tree (mostly the JIT). BPF jumps only forward, 8 bits
 * for a conditional one: "jge mid -> right; left; right", or "jge mid; ja right; left; right" when
 * the left half is longer than 255 instructions. */
static void emit_tree (struct filter *f, const struct rule *r, size_t n, uint32_t self) {
  if (n <= THUMBD_FILTER_LEAF) {
    for (size_t i = 0; i < n; i++) emit_rule(f, &r[i], self);
    RET(f, SECCOMP_RET_ALLOW);
    return;
  }
  size_t half = n / 2;
  unsigned at = f->count;
  op(f, BPF_JMP | BPF_JGE | BPF_K, r[half].nr, 0, 1);
  op(f, BPF_JMP | BPF_JA, 0, 0, 0);
  emit_tree(f, r, half, self);
  if (f->count > FILTER_MAX) return;
  unsigned left = f->count - at - 2;
  if (left <= 255) {  /* drop the ja: the left half's jumps are relative, it can move down one */
    memmove(&f->ins[at + 1], &f->ins[at + 2], left * sizeof f->ins[0]);
    f->ins[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, r[half].nr, (uint8_t)left, 0);
    f->count--;
  } else {
    f->ins[at + 1].k = left;
  }
  emit_tree(f, r + half, n - half, self);
}

static void build_filter (struct filter *f, int allow_exec, int allow_tcp) {
  uint32_t self = (uint32_t)getpid();  /* the pid survives exec: the wrapper's filter stays right */
  struct rule rules[RULES_MAX];
  size_t n = 0;
#define ADD(...) do { if (n < RULES_MAX) rules[n++] = (struct rule){ __VA_ARGS__ }; } while (0)

  /* No new processes (a decoder has no reason to start one; fork bombs). fork/vfork exist on x86-64
   * only. clone3 keeps its flags in memory, where BPF cannot look: ENOSYS makes glibc fall back to
   * clone, whose flags are checked. */
#ifdef __NR_fork
  ADD(.nr = __NR_fork, .kind = ERRNO, .error = EPERM);
  ADD(.nr = __NR_vfork, .kind = ERRNO, .error = EPERM);
#endif
  ADD(.nr = __NR_clone3, .kind = ERRNO, .error = ENOSYS);
  ADD(.nr = __NR_clone, .kind = CLONE);
  if (!allow_exec) {
    ADD(.nr = __NR_execve, .kind = ERRNO, .error = EPERM);
    ADD(.nr = __NR_execveat, .kind = ERRNO, .error = EPERM);
  }
  /* Reading or steering other processes: memory, file descriptors, signals by pidfd. */
  static const uint32_t other_processes[] = { __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
    __NR_kcmp, __NR_pidfd_open, __NR_pidfd_getfd, __NR_pidfd_send_signal, __NR_process_madvise,
    __NR_process_mrelease, __NR_tkill, __NR_migrate_pages };
  /* Sockets of every family: TCP/UDP, unix (the Docker socket, abstract names), netlink, raw; and the
   * IPC objects Landlock does not see (SysV segments of our uid, POSIX message queues). */
  static const uint32_t network[] = { __NR_socket, __NR_socketpair, __NR_shmget, __NR_shmat, __NR_msgget,
    __NR_semget, __NR_mq_open,
    /* With a TCP socket allowed (the range reader's port): no server side. listen() on an unbound socket
     * binds an ephemeral port on every address without bind(), which Landlock does not see (#15). */
    __NR_bind, __NR_listen, __NR_accept, __NR_accept4 };
  /* Kernel attack surface a decoder never needs: keyrings, BPF, perf, userfaultfd (used to win kernel
   * races), io_uring (its operations bypass seccomp), modules, kexec, clocks, personality (can turn
   * off ASLR for an exec). */
  static const uint32_t kernel[] = { __NR_keyctl, __NR_add_key, __NR_request_key, __NR_bpf,
    __NR_perf_event_open, __NR_userfaultfd, __NR_io_uring_setup, __NR_io_uring_enter,
    __NR_io_uring_register, __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_kexec_load,
    __NR_kexec_file_load, __NR_reboot, __NR_swapon, __NR_swapoff, __NR_acct, __NR_syslog, __NR_quotactl,
    __NR_settimeofday, __NR_clock_settime, __NR_adjtimex, __NR_clock_adjtime, __NR_sethostname,
    __NR_setdomainname, __NR_vhangup, __NR_personality,
#ifdef __x86_64__
    __NR_iopl, __NR_ioperm, __NR_modify_ldt, __NR_uselib, __NR_ustat, __NR_sysfs, __NR__sysctl,
#endif
  };
  /* Namespaces and mounts: the way out of Landlock's view of the filesystem. */
  static const uint32_t mounts[] = { __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_unshare,
    __NR_setns, __NR_open_tree, __NR_open_tree_attr, __NR_move_mount, __NR_fsopen, __NR_fsconfig,
    __NR_fsmount, __NR_fspick, __NR_mount_setattr, __NR_name_to_handle_at, __NR_open_by_handle_at,
    __NR_fanotify_init };
  /* File metadata, which Landlock does not cover: a root tool owns every temp file of the server. */
  static const uint32_t metadata[] = { __NR_fchmod, __NR_fchmodat, __NR_fchmodat2, __NR_fchown,
    __NR_fchownat, __NR_utimensat, __NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_removexattr,
    __NR_lremovexattr, __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat, __NR_truncate,
    __NR_inotify_add_watch,
#ifdef __x86_64__
    __NR_chmod, __NR_chown, __NR_lchown, __NR_utime, __NR_utimes, __NR_futimesat,
#endif
  };
  const struct { const uint32_t *nrs; size_t count; } lists[] = {
    { other_processes, sizeof other_processes / 4 }, { network, sizeof network / 4 },
    { kernel, sizeof kernel / 4 }, { mounts, sizeof mounts / 4 }, { metadata, sizeof metadata / 4 }
  };
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (size_t i = 0; i < lists[l].count; i++) {
      uint32_t nr = lists[l].nrs[i];
      if (allow_tcp && nr == __NR_socket) ADD(.nr = nr, .kind = TCP_SOCKET);
      else ADD(.nr = nr, .kind = ERRNO, .error = EPERM);
    }
  }
  if (allow_tcp) {  /* the flags argument of each: sendto(fd, buf, len, flags, ...), sendmsg(fd, msg, flags), sendmmsg(fd, v, n, flags) */
    ADD(.nr = __NR_sendto, .kind = NO_FASTOPEN, .which_arg = 3);
    ADD(.nr = __NR_sendmsg, .kind = NO_FASTOPEN, .which_arg = 2);
    ADD(.nr = __NR_sendmmsg, .kind = NO_FASTOPEN, .which_arg = 3);
  }
  /* Signals only to ourselves (raise, abort): same-uid processes would otherwise be fair game, and
   * kill(0) reaches the whole process group, the zygote included. Landlock's signal scope (ABI 6)
   * says the same on newer kernels. */
  ADD(.nr = __NR_kill, .kind = SELF, .which_arg = -1, .pid_arg = 0);
  ADD(.nr = __NR_tgkill, .kind = SELF, .which_arg = -1, .pid_arg = 0);
  ADD(.nr = __NR_rt_sigqueueinfo, .kind = SELF, .which_arg = -1, .pid_arg = 0);
  ADD(.nr = __NR_rt_tgsigqueueinfo, .kind = SELF, .which_arg = -1, .pid_arg = 0);
  /* A same-uid process may change another's limits, priority and CPU placement: only our own. */
  ADD(.nr = __NR_prlimit64, .kind = SELF, .which_arg = -1, .pid_arg = 0, .allow_zero = 1);
  ADD(.nr = __NR_sched_setaffinity, .kind = SELF, .which_arg = -1, .pid_arg = 0, .allow_zero = 1);
  ADD(.nr = __NR_sched_setscheduler, .kind = SELF, .which_arg = -1, .pid_arg = 0, .allow_zero = 1);
  ADD(.nr = __NR_sched_setparam, .kind = SELF, .which_arg = -1, .pid_arg = 0, .allow_zero = 1);
  ADD(.nr = __NR_sched_setattr, .kind = SELF, .which_arg = -1, .pid_arg = 0, .allow_zero = 1);
  ADD(.nr = __NR_setpriority, .kind = SELF, .which_arg = 0, .which = PRIO_PROCESS, .pid_arg = 1, .allow_zero = 1);
  ADD(.nr = __NR_ioprio_set, .kind = SELF, .which_arg = 0, .which = 1 /* IOPRIO_WHO_PROCESS */, .pid_arg = 1, .allow_zero = 1);
  ADD(.nr = __NR_ioctl, .kind = IOCTL);
#undef ADD
  for (size_t i = 1; i < n; i++) {  /* by number; insertion sort: qsort's malloc costs more in a fresh child */
    struct rule r = rules[i];
    size_t j = i;
    for (; j > 0 && rules[j - 1].nr > r.nr; j--) rules[j] = rules[j - 1];
    rules[j] = r;
  }

  /* Another architecture's syscall numbers would mean other syscalls: kill (this also catches i386
   * int 0x80 on x86-64). */
  LOAD(f, offsetof(struct seccomp_data, arch));
  op(f, BPF_JMP | BPF_JEQ | BPF_K, THUMBD_AUDIT_ARCH, 1, 0);
  RET(f, SECCOMP_RET_KILL_PROCESS);
  LOAD(f, offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
  op(f, BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);  /* x32 syscalls share AUDIT_ARCH_X86_64 */
  RET(f, SECCOMP_RET_KILL_PROCESS);
#endif
  emit_tree(f, rules, n, self);
}

static int enter_seccomp (int allow_exec, int allow_tcp, char *err, size_t errlen) {
  struct filter f = { .count = 0 };  /* 4 KB on the stack */
  build_filter(&f, allow_exec, allow_tcp);
  if (f.count > FILTER_MAX) { note(err, errlen, "seccomp: filter too long"); return -1; }
  struct sock_fprog prog = { .len = (unsigned short)f.count, .filter = f.ins };
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0) return 0;
  if (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0) return 0;  /* < 3.17 */
  note(err, errlen, "seccomp: %s", strerror(errno));
  return -1;
}

int thumbd_sandbox_enter (const struct thumbd_sandbox *sandbox, char *err, size_t errlen) {
  int failed = 0, missing = 0;
  if (err != NULL && errlen > 0) err[0] = '\0';

  if ((sandbox->address_space_bytes > 0 && limit(RLIMIT_AS, sandbox->address_space_bytes) != 0) ||
      (sandbox->cpu_seconds > 0 && limit(RLIMIT_CPU, sandbox->cpu_seconds) != 0) ||
      limit(RLIMIT_FSIZE, 0) != 0 || limit(RLIMIT_CORE, 0) != 0) {
    note(err, errlen, "setrlimit: %s", strerror(errno));
    failed = 1;
  }
  if (drop_capabilities() != 0) { note(err, errlen, "capset: %s", strerror(errno)); failed = 1; }
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) { note(err, errlen, "pdeathsig: %s", strerror(errno)); failed = 1; }
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) { note(err, errlen, "dumpable: %s", strerror(errno)); failed = 1; }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { note(err, errlen, "no_new_privs: %s", strerror(errno)); failed = 1; }

  int abi = landlock_abi();
  missing |= missing_for_abi(abi);
  /* A port without Landlock's TCP rules would be any port on any host: refuse to run instead. */
  if (sandbox->connect_port != 0 && abi < 4) { note(err, errlen, "a TCP port needs Landlock ABI >= 4 (have %d)", abi); failed = 1; }
  if (abi < 1) note(err, errlen, "landlock unavailable (%s): filesystem not restricted", strerror(-abi));
  else {
    if (abi < 4) note(err, errlen, "landlock ABI %d: no TCP rules (seccomp still denies sockets)", abi);
    if (abi < 6) note(err, errlen, "landlock ABI %d: no signal/abstract-unix scopes (seccomp still denies both)", abi);
    if (enter_landlock(sandbox, abi, err, errlen) != 0) failed = 1;
  }

  if (!seccomp_filters_supported()) {
    missing |= THUMBD_SANDBOX_SECCOMP;
    note(err, errlen, "seccomp filters unavailable: syscalls not restricted");
  } else if (enter_seccomp(sandbox->allow_exec, sandbox->connect_port != 0, err, errlen) != 0) {
    failed = 1;
  }

  if (missing & sandbox->require) { note(err, errlen, "a required mechanism is missing"); failed = 1; }
  return failed ? -1 : missing;
}
