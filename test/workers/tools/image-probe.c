// A stand-in for an exploit inside native/image-decode (test/workers/tools/image-decode.test.ts, still-decode.test.ts):
// preloaded, it takes the place of libvips' vips_region_fetch, vips_image_write_to_memory and (--info)
// vips_image_hasalpha, and of libturbojpeg's tjDecompress2 (--scale), which image-decode
// calls after libvips has read its untrusted input's header, so it runs where an exploit of the decoder would,
// confined as the decoder is. It reports each attempt on stderr as "<what> ok" or "<what> denied", then tries to
// exec (stdout "exec ok" if it could).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void say (const char *what, int ok) { fprintf(stderr, "%s %s\n", what, ok ? "ok" : "denied"); }

/* Whether the server's memory (readable mappings, through /proc/PID/mem) holds `secret`. */
static int server_memory_has (const char *pid, const char *secret) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%s/maps", pid);
  FILE *maps = fopen(path, "r");
  snprintf(path, sizeof path, "/proc/%s/mem", pid);
  int mem = open(path, O_RDONLY);
  if (maps == NULL || mem < 0) return 0;
  static char buffer[1 << 20];
  char line[512];
  size_t n = strlen(secret);
  int found = 0;
  while (!found && fgets(line, sizeof line, maps) != NULL) {
    unsigned long from, to;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &from, &to, perms) != 3 || perms[0] != 'r' || perms[1] != 'w') continue;
    for (unsigned long at = from; at < to && !found; at += sizeof buffer - n) {
      ssize_t got = pread(mem, buffer, sizeof buffer < to - at ? sizeof buffer : to - at, (off_t)at);
      if (got <= 0) break;
      found = memmem(buffer, (size_t)got, secret, n) != NULL;
    }
  }
  return found;
}

static void probe (void) {
  say("open-passwd", open("/etc/passwd", O_RDONLY) >= 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(getenv("PROBE_PORT"))), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  say("connect-server-port", s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0);
  say("read-server-memory", server_memory_has(getenv("THUMBD_TOOL_OF"), getenv("PROBE_SECRET")));
  fflush(stderr);
  char *argv[] = { "echo", "exec ok", NULL };
  execve("/bin/echo", argv, NULL);
  say("exec", 0);
  exit(99);
}

/* The calls image-decode makes once libvips (or libturbojpeg) has parsed its untrusted input's header (native/image-decode.c), before
 * the pixels are decoded: where an exploit of a loader would run. */
void *vips_region_fetch (void) { probe(); return NULL; }
void *vips_image_write_to_memory (void) { probe(); return NULL; }
int vips_image_hasalpha (void) { probe(); return 0; }
int tjDecompress2 (void) { probe(); return -1; }
