/* Two generated libraries in one program, each with its own registry: takt_std_msgs's, named
 * takt_msgs (the system layer finds a ROS type of a system file there), and takt_test_msgs's,
 * named after its library. Both headers in one translation unit. takt_test_msgs is linked before
 * takt_system and takt_std_msgs: when every registry was named takt_msgs, the linker took this
 * program's takt_msgs_find from takt_test_msgs and the system layer called that one too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takt/system.h"
#include "takt_msgs_registry.h"
#include "takt_test_msgs_registry.h"

static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);                           \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

int main(void) {
  /* each library's types through its own registry, and only there */
  CHECK(takt_test_msgs_find("takt_test_msgs/Nothing") != NULL);
  CHECK(takt_test_msgs_find("std_msgs/String") == NULL);
  CHECK(takt_test_msgs_srvs_count == 0);
  CHECK(takt_msgs_find("std_msgs/String") != NULL);
  CHECK(takt_msgs_find("sensor_msgs/LaserScan") != NULL);
  CHECK(takt_msgs_find("takt_test_msgs/Nothing") == NULL);
  const takt_srv_entry_t *srv = takt_msgs_srvs_find("std_srvs/SetBool");
  CHECK(srv != NULL && srv->request == takt_msgs_find("std_srvs/SetBoolRequest"));

  /* the system layer's lookup of a ros1 route's type: the standard registry's */
  static const char yaml[] = "nodes:\n  - name: a\n    timers: [{name: t, period_ms: 10, publish: x}]\n"
                             "ros1: {master: http://127.0.0.1:11311/, "
                             "export: [{topic: x, type: std_msgs/String}]}\n";
  takt_system_desc_t *desc = calloc(1, sizeof *desc);
  char err[512] = "";
  CHECK(desc != NULL);
  if (desc != NULL) {
    takt_err_t rc = takt_system_parse("mem.yaml", (const unsigned char *)yaml, strlen(yaml), desc,
                                      err, sizeof err);
    if (rc != 0) fprintf(stderr, "takt_system_parse: %s\n", err);
    CHECK(rc == 0);
    free(desc);
  }
  if (failures == 0) printf("test_msgs_registries: ok\n");
  return failures == 0 ? 0 : 1;
}
