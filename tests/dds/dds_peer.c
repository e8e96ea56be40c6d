/* takt's side of the ROS 2 peer tests (tests/dds/run_peers.py): a takt process with a DDS bridge
 * that imports a ROS 2 topic into a takt subscription, or exports a takt publisher's topic.
 *
 *   takt-dds-peer listen TOPIC TYPE COUNT TIMEOUT_S DOMAIN
 *   takt-dds-peer talk   TOPIC TYPE COUNT PERIOD_MS PREFIX DOMAIN
 *   takt-dds-peer serve|call SERVICE cyclone|plain COUNT TIMEOUT_S DOMAIN
 *   takt-dds-peer refuse TOPIC string 0 TIMEOUT_S DOMAIN
 *   takt-dds-peer listen-first TOPIC TYPE 1 TIMEOUT_S DOMAIN
 * (refuse: a reliable reader; exit 0 once DDS reported a writer incompatible with it and
 * nothing arrived; listen-first: a listener that exits 0 on its first message, for a peer that
 * publishes until the listener has gone)
 * (std_srvs/SetBool as tests/dds/ros2_peer.py serves and calls it, with the given mapping)
 * TYPE: string (std_msgs/String), header (ROS 2 std_msgs/msg/Header) or image (ROS 2
 * sensor_msgs/msg/Image, 640x480 rgb8, as tests/dds/ros2_peer.py makes them). Output lines as the
 * rclpy peer's (tests/dds/ros2_peer.py); exit 0 when exactly COUNT arrived / were acknowledged,
 * 2 otherwise. Cyclone's configuration comes from CYCLONEDDS_URI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensor_msgs/msg/Image.h"
#include "std_msgs/String.h"
#include "std_srvs/SetBool.h"
#include "std_msgs/msg/Header.h"
#include "takt/bridge.h"
#include "takt/dds.h"
#include "takt/takt.h"

#define CHECK(expr)                                                                      \
  do {                                                                                   \
    takt_err_t rc_ = (expr);                                                             \
    if (rc_ != TAKT_OK) {                                                                \
      fprintf(stderr, "takt-dds-peer: %s: %s\n", #expr, takt_strerror(rc_));             \
      exit(3);                                                                           \
    }                                                                                    \
  } while (0)

static unsigned g_got;
static int g_header, g_image;

enum { W = 640, H = 480 };

/* CRC-32 (IEEE, as zlib.crc32), bit by bit: a test's check of 921,600 bytes */
static uint32_t crc32_of(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

static sensor_msgs__msg__Image g_img; /* the one being published (3.7 MB: not on the stack) */

static void on_msg(takt_subscription_t *sub, const takt_message_t *msg, void *user) {
  (void)sub;
  (void)user;
  if (g_image) {
    const sensor_msgs__msg__Image *im = msg->data;
    printf("got %s %ux%u %s %u %08x\n", im->header.frame_id.data, im->width, im->height,
           im->encoding.data, im->step, crc32_of(im->data.data, im->data.size));
  } else if (g_header) {
    const std_msgs__msg__Header *h = msg->data;
    printf("got %s %d %u\n", h->frame_id.data, h->stamp.sec, h->stamp.nanosec);
  } else {
    const std_msgs__String *s = msg->data;
    printf("got %s\n", s->data.data);
  }
  fflush(stdout);
  __atomic_fetch_add(&g_got, 1, __ATOMIC_RELAXED);
}

static unsigned g_served;

static takt_err_t toggle(takt_service_t *srv, const takt_message_t *req, void *resp, void *user) {
  (void)srv;
  (void)user;
  const std_srvs__SetBoolRequest *q = req->data;
  std_srvs__SetBoolResponse *r = resp;
  std_srvs__SetBoolResponse__init(r);
  r->success = !q->data;
  r->message.size = (uint32_t)snprintf(r->message.data, sizeof r->message.data, "was %s",
                                       q->data ? "on" : "off");
  printf("served %s\n", q->data ? "on" : "off");
  fflush(stdout);
  __atomic_fetch_add(&g_served, 1, __ATOMIC_RELAXED);
  return TAKT_OK;
}

static int run_service(char **argv) {
  bool serve = strcmp(argv[1], "serve") == 0;
  const char *name = argv[2];
  takt_dds_service_mapping_t mapping =
      strcmp(argv[3], "cyclone") == 0 ? TAKT_DDS_SERVICE_CYCLONE : TAKT_DDS_SERVICE_PLAIN;
  unsigned count = (unsigned)atoi(argv[4]);
  double timeout_s = atof(argv[5]);
  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = 4u << 20;
  takt_context_t *ctx;
  CHECK(takt_context_create(&cc, &ctx));
  takt_node_t *node;
  CHECK(takt_node_create(ctx, "app", &node));
  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = (uint32_t)atoi(argv[6]);
  dc.rx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_thread.policy = TAKT_SCHED_OTHER;
  /* an answer late under ThreadSanitizer on a loaded machine is still taken (the default, 1 s, is
   * a robot's; here a lost answer shows as the count of calls_expired) */
  dc.call_timeout_ns = 10 * TAKT_NS_PER_S;
  takt_bridge_backend_t be;
  CHECK(takt_dds_backend_create(ctx, &dc, &be));
  takt_dds_t *dds = takt_dds_of(be);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  takt_bridge_t *bridge;
  CHECK(takt_bridge_create_on(ctx, "dds_bridge", &bc, be, &bridge));
  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  const takt_type_support_t *rq = &std_srvs__SetBoolRequest__type_cdr,
                            *rs = &std_srvs__SetBoolResponse__type_cdr;
  takt_service_t *srv = NULL;
  takt_client_t *cli = NULL;
  int rc = 0;
  if (serve) {
    CHECK(takt_service_create(node, name, rq, rs, toggle, NULL, NULL, &srv));
    CHECK(takt_dds_export_service(dds, bridge, name, "std_srvs/SetBool", rq, rs, 10, mapping));
  } else {
    CHECK(takt_dds_import_service(dds, bridge, name, "std_srvs/SetBool", rq, rs, 10, mapping));
  }
  CHECK(takt_executor_add_node(exec, node));
  CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
  CHECK(takt_bridge_start(bridge));
  int64_t end = takt_time_now() + (int64_t)(timeout_s * 1e9);
  if (serve) {
    printf("serving\n");
    fflush(stdout);
    while (__atomic_load_n(&g_served, __ATOMIC_RELAXED) < count && takt_time_now() < end)
      (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
    (void)takt_executor_spin_until(exec, takt_time_now() + 300 * TAKT_NS_PER_MS);
    (void)takt_dds_wait_acked(dds, 5 * TAKT_NS_PER_S);
    rc = g_served == count ? 0 : 2;
  } else {
    takt_client_options_t co = TAKT_CLIENT_OPTIONS_DEFAULT;
    co.max_pending = 2;
    CHECK(takt_client_create(node, name, rq, rs, NULL, NULL, &co, &cli));
    while (takt_dds_service_matched(dds, name) < 1 && takt_time_now() < end)
      (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
    if (takt_dds_service_matched(dds, name) < 1) {
      printf("no service\n");
      rc = 2;
    }
    (void)takt_executor_spin_until(exec, takt_time_now() + 500 * TAKT_NS_PER_MS);
    /* two calls in flight at a time: each answer must reach its own call */
    for (unsigned i = 0; rc == 0 && i < count; i += 2) {
      takt_future_t f[2];
      unsigned k = count - i < 2 ? count - i : 2;
      for (unsigned j = 0; j < k; j++) {
        std_srvs__SetBoolRequest q;
        std_srvs__SetBoolRequest__init(&q);
        q.data = ((i + j) % 2) == 0;
        CHECK(takt_client_call(cli, &q, sizeof q, &f[j]));
      }
      for (unsigned j = 0; j < k; j++) {
        while (takt_future_status(&f[j]) == TAKT_FUTURE_PENDING && takt_time_now() < end)
          (void)takt_executor_spin_until(exec, takt_time_now() + 20 * TAKT_NS_PER_MS);
        std_srvs__SetBoolResponse r;
        if (takt_future_take(&f[j], &r, sizeof r) != TAKT_OK) {
          printf("no answer %u\n", i + j);
          rc = 2;
          continue;
        }
        printf("answer %u %d %s\n", i + j, r.success ? 1 : 0, r.message.data);
      }
      fflush(stdout);
    }
  }
  takt_dds_stats_t st;
  takt_dds_get_stats(dds, &st);
  fprintf(stderr,
          "dds: written %llu received %llu requests_dropped %llu replies_dropped %llu "
          "reply_ids_added %llu reply_ids_missed %llu calls_expired %llu\n",
          (unsigned long long)st.written, (unsigned long long)st.received,
          (unsigned long long)st.requests_dropped, (unsigned long long)st.replies_dropped,
          (unsigned long long)st.reply_ids_added, (unsigned long long)st.reply_ids_missed,
          (unsigned long long)st.calls_expired);
  /* where the calls went on the bridge's side (a call without an answer is told apart: the
   * answer never came, came for no call in flight, failed to decode, or the call expired) */
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(bridge, &bs);
  fprintf(stderr,
          "bridge: requests_forwarded %llu requests_refused %llu answers_received %llu "
          "answers_dropped %llu calls_expired %llu decode_errors %llu requests_served %llu "
          "answers_returned %llu\n",
          (unsigned long long)bs.requests_forwarded, (unsigned long long)bs.requests_refused,
          (unsigned long long)bs.answers_received, (unsigned long long)bs.answers_dropped,
          (unsigned long long)bs.calls_expired, (unsigned long long)bs.decode_errors,
          (unsigned long long)bs.requests_served, (unsigned long long)bs.answers_returned);
  takt_bridge_stop(bridge);
  if (cli != NULL) CHECK(takt_client_destroy(cli));
  CHECK(takt_executor_destroy(exec));
  takt_bridge_destroy(bridge);
  if (srv != NULL) CHECK(takt_service_destroy(srv));
  CHECK(takt_node_destroy(node));
  takt_context_destroy(ctx);
  return rc;
}

int main(int argc, char **argv) {
  if (argc >= 7 && (strcmp(argv[1], "serve") == 0 || strcmp(argv[1], "call") == 0))
    return run_service(argv);
  if (argc < 7) {
    fprintf(stderr, "usage: takt-dds-peer listen|talk TOPIC TYPE COUNT ARG [PREFIX] DOMAIN\n");
    return 3;
  }
  const char *mode = argv[1], *topic_name = argv[2];
  g_header = strcmp(argv[3], "header") == 0;
  g_image = strcmp(argv[3], "image") == 0;
  unsigned count = (unsigned)atoi(argv[4]);
  bool talk = strcmp(mode, "talk") == 0;
  bool refuse = strcmp(mode, "refuse") == 0;
  bool first = strcmp(mode, "listen-first") == 0;
  if (first) count = 1;
  unsigned domain = (unsigned)atoi(argv[talk ? 7 : 6]);
  const takt_type_support_t *ts = g_image    ? &sensor_msgs__msg__Image__type_cdr
                                  : g_header ? &std_msgs__msg__Header__type_cdr
                                             : &std_msgs__String__type_cdr;
  uint32_t slots = g_image ? 8 : 64; /* holds a whole burst */

  takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
  cc.arena_bytes = g_image ? (size_t)96 << 20 : (size_t)4 << 20;
  takt_context_t *ctx;
  CHECK(takt_context_create(&cc, &ctx));
  takt_node_t *node;
  CHECK(takt_node_create(ctx, "app", &node));
  takt_topic_t *topic;
  CHECK(takt_topic_create(ctx, topic_name, ts, slots, &topic));

  takt_dds_config_t dc = TAKT_DDS_CONFIG_DEFAULT;
  dc.domain = domain;
  dc.rx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_thread.policy = TAKT_SCHED_OTHER;
  dc.tx_queue = g_image ? 8 : 64;
  if (g_image) dc.max_payload = W * H * 3 + 1024; /* the pixels and the header fields */
  takt_bridge_backend_t be;
  CHECK(takt_dds_backend_create(ctx, &dc, &be));
  takt_dds_t *dds = takt_dds_of(be);
  takt_bridge_config_t bc = TAKT_BRIDGE_CONFIG_DEFAULT;
  bc.thread.policy = TAKT_SCHED_OTHER;
  bc.rx_queue = g_image ? 8 : 64;
  if (g_image) bc.max_message = (uint32_t)sizeof(sensor_msgs__msg__Image);
  takt_bridge_t *bridge;
  CHECK(takt_bridge_create_on(ctx, "dds_bridge", &bc, be, &bridge));
  takt_dds_qos_t qos = TAKT_DDS_QOS_DEFAULT;
  qos.depth = count + 10; /* as the rclpy peer: nothing is overwritten in the history */
  qos.transient_local = g_image; /* as the rclpy peer's images */

  takt_executor_t *exec;
  CHECK(takt_executor_create(ctx, TAKT_EXEC_TIDE, NULL, &exec));
  takt_publisher_t *pub = NULL;
  takt_subscription_t *sub = NULL;
  int rc = 0;
  if (refuse) {
    double timeout_s = atof(argv[5]);
    qos.reliable = true;
    CHECK(takt_dds_import(dds, bridge, topic, 10, &qos));
    CHECK(takt_executor_add_node(exec, node));
    CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
    CHECK(takt_bridge_start(bridge));
    int64_t end = takt_time_now() + (int64_t)(timeout_s * 1e9);
    takt_dds_stats_t st;
    do {
      (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
      takt_dds_get_stats(dds, &st);
    } while (st.incompatible_qos == 0 && takt_time_now() < end);
    (void)takt_executor_spin_until(exec, takt_time_now() + 500 * TAKT_NS_PER_MS);
    takt_dds_get_stats(dds, &st);
    printf("incompatible %llu matched %d received %llu\n", (unsigned long long)st.incompatible_qos,
           takt_dds_matched(dds, topic), (unsigned long long)st.received);
    rc = st.incompatible_qos >= 1 && st.received == 0 && takt_dds_matched(dds, topic) == 0 ? 0 : 2;
  } else if (!talk) {
    double timeout_s = atof(argv[5]);
    takt_subscription_options_t so = TAKT_SUBSCRIPTION_OPTIONS_DEFAULT;
    so.depth = 64;
    so.attr.priority = 10;
    CHECK(takt_subscription_create(node, topic, "listener", on_msg, NULL, &so, &sub));
    CHECK(takt_dds_import(dds, bridge, topic, 10, &qos));
    CHECK(takt_executor_add_node(exec, node));
    CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
    CHECK(takt_bridge_start(bridge));
    printf("listening\n");
    fflush(stdout);
    int64_t end = takt_time_now() + (int64_t)(timeout_s * 1e9);
    while (__atomic_load_n(&g_got, __ATOMIC_RELAXED) < count && takt_time_now() < end)
      (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
    /* a grace period: more than COUNT (duplicates) would show */
    if (!first) (void)takt_executor_spin_until(exec, takt_time_now() + 500 * TAKT_NS_PER_MS);
    rc = first ? (g_got >= 1 ? 0 : 2) : g_got == count ? 0 : 2;
  } else {
    unsigned period_ms = (unsigned)atoi(argv[5]);
    const char *prefix = argv[6];
    CHECK(takt_publisher_create(node, topic, &pub));
    CHECK(takt_dds_export(dds, bridge, topic, 10, &qos));
    CHECK(takt_executor_add_node(exec, node));
    CHECK(takt_executor_add_node(exec, takt_bridge_node(bridge)));
    CHECK(takt_bridge_start(bridge));
    int64_t end = takt_time_now() + 20 * TAKT_NS_PER_S;
    while (takt_dds_matched(dds, topic) < 1 && takt_time_now() < end)
      (void)takt_executor_spin_until(exec, takt_time_now() + 50 * TAKT_NS_PER_MS);
    if (takt_dds_matched(dds, topic) < 1) {
      printf("no subscriber matched\n");
      rc = 2;
    } else {
      printf("matched\n");
      fflush(stdout);
      (void)takt_executor_spin_until(exec, takt_time_now() + 500 * TAKT_NS_PER_MS);
      for (unsigned i = 0; i < count; i++) {
        if (g_image) {
          sensor_msgs__msg__Image__init(&g_img);
          g_img.header.frame_id.size =
              (uint32_t)snprintf(g_img.header.frame_id.data, sizeof g_img.header.frame_id.data, "%s%u", prefix, i);
          g_img.height = H;
          g_img.width = W;
          g_img.encoding.size = (uint32_t)snprintf(g_img.encoding.data, sizeof g_img.encoding.data, "rgb8");
          g_img.step = W * 3;
          g_img.data.size = W * H * 3;
          for (uint32_t j = 0; j < g_img.data.size; j++) g_img.data.data[j] = (uint8_t)(j * 31u + i);
          CHECK(takt_publish(pub, &g_img, sizeof g_img));
        } else if (g_header) {
          std_msgs__msg__Header h;
          std_msgs__msg__Header__init(&h);
          h.stamp.sec = (int32_t)i;
          h.stamp.nanosec = 1000u * i;
          h.frame_id.size = (uint32_t)snprintf(h.frame_id.data, sizeof h.frame_id.data, "%s%u", prefix, i);
          CHECK(takt_publish(pub, &h, sizeof h));
        } else {
          std_msgs__String s;
          std_msgs__String__init(&s);
          s.data.size = (uint32_t)snprintf(s.data.data, sizeof s.data.data, "%s %u", prefix, i);
          CHECK(takt_publish(pub, &s, sizeof s));
        }
        (void)takt_executor_spin_until(exec, takt_time_now() + (int64_t)period_ms * TAKT_NS_PER_MS);
      }
      takt_err_t acked = takt_dds_wait_acked(dds, 5 * TAKT_NS_PER_S);
      takt_dds_stats_t st;
      takt_dds_get_stats(dds, &st);
      printf("sent %llu%s\n", (unsigned long long)st.written, acked == TAKT_OK ? "" : " (not acknowledged)");
      rc = st.written == count && acked == TAKT_OK ? 0 : 2;
    }
  }
  takt_dds_stats_t st;
  takt_dds_get_stats(dds, &st);
  takt_bridge_stats_t bs;
  takt_bridge_get_stats(bridge, &bs);
  fprintf(stderr,
          "dds: written %llu received %llu write_errors %llu tx_full %llu oversize %llu refused %llu "
          "incompatible_qos %llu; bridge: forwarded %llu imported %llu decode_errors %llu\n",
          (unsigned long long)st.written, (unsigned long long)st.received,
          (unsigned long long)st.write_errors, (unsigned long long)st.tx_queue_full,
          (unsigned long long)st.oversize, (unsigned long long)st.deliver_refused,
          (unsigned long long)st.incompatible_qos, (unsigned long long)bs.forwarded,
          (unsigned long long)bs.imported, (unsigned long long)bs.decode_errors);
  fflush(stdout);
  takt_bridge_stop(bridge);
  CHECK(takt_executor_destroy(exec));
  if (sub != NULL) CHECK(takt_subscription_destroy(sub));
  if (pub != NULL) CHECK(takt_publisher_destroy(pub));
  takt_bridge_destroy(bridge);
  CHECK(takt_node_destroy(node));
  CHECK(takt_topic_destroy(topic));
  takt_context_destroy(ctx);
  return rc;
}
