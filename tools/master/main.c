/* takt-master: the embedded ROS 1 master as a program (`takt master [--port 11311]`): serves
 * rospy, roscpp and the ROS tools until SIGINT, SIGTERM or SIGHUP. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/ros1.h"

static int usage(FILE *f, int status) {
  fprintf(f, "usage: takt-master [--port PORT] [--host ADDRESS] [--param-bytes N] [--max-request N]\n"
             "  a ROS 1 master (master API and parameter server); default 127.0.0.1:11311\n"
             "  --param-bytes N   room for the parameters' values, XML-RPC encoded (default 2M;\n"
             "                    reading them all at once needs --max-request as large)\n"
             "  --max-request N   the largest request or answer, e.g. a robot_description being\n"
             "                    set or read (default 2M; at most 2 such at once)\n"
             "  N in bytes, or with a K or M suffix\n");
  return status;
}

/* "N", "NK" or "NM" as bytes into *out; false if s is not one, or not in [lo, hi]. */
static bool parse_bytes(const char *s, uint64_t lo, uint64_t hi, uint32_t *out) {
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || s[0] == '-') return false;
  unsigned shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 0;
  if (shift > 0) end++;
  if (v > (hi >> shift)) return false;
  v <<= shift;
  if (*end != '\0' || v < lo || v > hi) return false;
  *out = (uint32_t)v;
  return true;
}

int main(int argc, char **argv) {
  /* blocked first: a stop signal sent while starting waits for sigwait below */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  takt_ros1_master_config_t cfg = TAKT_ROS1_MASTER_CONFIG_DEFAULT;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout, 0);
    if (i + 1 >= argc) return usage(stderr, 2);
    if (strcmp(argv[i], "--port") == 0) {
      char *end = NULL;
      long p = strtol(argv[++i], &end, 10);
      if (end == NULL || *end != '\0' || p < 0 || p > 65535) {
        fprintf(stderr, "takt-master: --port %s is not a port number (0 .. 65535)\n", argv[i]);
        return 2;
      }
      cfg.port = (uint16_t)p;
    } else if (strcmp(argv[i], "--host") == 0) {
      cfg.host = argv[++i];
    } else if (strcmp(argv[i], "--param-bytes") == 0) {
      if (!parse_bytes(argv[++i], 0, 256u << 20, &cfg.param_bytes)) {
        fprintf(stderr, "takt-master: --param-bytes %s is not a size (0 .. 256M)\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--max-request") == 0) {
      if (!parse_bytes(argv[++i], 4096, 64u << 20, &cfg.max_large)) {
        fprintf(stderr, "takt-master: --max-request %s is not a size (4K .. 64M)\n", argv[i]);
        return 2;
      }
      if (cfg.max_large <= cfg.max_xmlrpc) cfg.max_xmlrpc = cfg.max_large; /* no large buffers */
    } else {
      fprintf(stderr, "takt-master: unknown argument '%s'\n", argv[i]);
      return usage(stderr, 2);
    }
  }
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = takt_ros1_master_bytes(&cfg) + (1u << 20);
  takt_context_t *ctx = NULL;
  takt_err_t rc = takt_context_create(&cc, &ctx);
  if (rc < 0) {
    fprintf(stderr, "takt-master: context: %s\n", takt_strerror(rc));
    return 1;
  }
  takt_ros1_master_t *m = NULL;
  rc = takt_ros1_master_create(ctx, &cfg, &m);
  if (rc < 0) {
    fprintf(stderr, "takt-master: cannot serve on %s:%u: %s\n", cfg.host ? cfg.host : "127.0.0.1",
            (unsigned)cfg.port, rc == TAKT_EOS ? "the port is in use or not ours" : takt_strerror(rc));
    takt_context_destroy(ctx);
    return 1;
  }
  printf("takt master: %s (pid %d)\n", takt_ros1_master_uri(m), (int)takt_port_pid());
  fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  takt_ros1_master_destroy(m);
  takt_context_destroy(ctx);
  return 0;
}
