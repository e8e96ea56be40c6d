/* Fuzz target: a takt shared-memory segment whose registry another process has corrupted. Each
 * input is a list of patches {u16 offset, u8 length, bytes} applied to the segment's header,
 * participant table and topic directory (not to the locks: a process that may write the segment
 * can always stop the others by corrupting a lock; the segment is protected by its mode) of a
 * segment holding one topic with a publisher, a subscriber and a queued message. Then a second
 * attachment and the first one use it: every call must return a code, never crash or hang. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "takt/port_shm.h"
#include "takt/shm.h"
#include "shm/shm_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const takt_shm_topic_config_t topic_a = {.name = "a", .type = "t", .msg_size = 8,
                                                .slots = 4, .depth = 4, .max_subs = 2,
                                                .max_pubs = 2, .policy = TAKT_SHM_KEEP_LAST};
static const takt_shm_topic_config_t topic_b = {.name = "b", .type = "t", .msg_size = 16,
                                                .slots = 2, .depth = 2, .max_subs = 2,
                                                .max_pubs = 2, .policy = TAKT_SHM_HARD};

static void use(takt_shm_t *s) {
  takt_shm_pub_t *p;
  takt_shm_sub_t *q;
  takt_shm_sample_t smp;
  uint64_t v = 7;
  if (takt_shm_subscriber_create(s, &topic_a, 1, &q) == TAKT_OK) {
    if (takt_shm_publisher_create(s, &topic_a, &p) == TAKT_OK) {
      (void)takt_shm_write(p, &v, sizeof v, TAKT_SHM_NOW, 0, 0);
      (void)takt_shm_publisher_destroy(p);
    }
    while (takt_shm_take(q, &smp) == TAKT_OK) (void)takt_shm_release(q, &smp);
    (void)takt_shm_subscriber_destroy(q);
  }
  if (takt_shm_publisher_create(s, &topic_b, &p) == TAKT_OK) {
    (void)takt_shm_write(p, &v, sizeof v, TAKT_SHM_NOW, 0, 0);
    (void)takt_shm_publisher_destroy(p);
  }
  takt_shm_topic_stats_t ts;
  takt_shm_stats_t ss;
  (void)takt_shm_topic_stats(s, "a", &ts);
  (void)takt_shm_topic_stats(s, "b", &ts);
  (void)takt_shm_stats(s, &ss);
  (void)takt_shm_reclaim(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static takt_context_t *ctx;
  static char domain[32];
  if (ctx == NULL) {
    takt_context_config_t cc = TAKT_CONTEXT_CONFIG_DEFAULT;
    if (takt_context_create(&cc, &ctx) != TAKT_OK) __builtin_trap();
    snprintf(domain, sizeof domain, "fuzz%d", (int)getpid());
  }
  (void)takt_shm_unlink(domain);
  takt_shm_config_t c = TAKT_SHM_CONFIG_DEFAULT;
  c.domain = domain;
  c.max_topics = 4;
  c.max_participants = 4;
  c.area_bytes = 1u << 16;
  c.attach_timeout_ns = 1000000;
  takt_shm_t *first;
  if (takt_shm_attach(ctx, &c, &first) != TAKT_OK) __builtin_trap();
  takt_shm_pub_t *p;
  takt_shm_sub_t *q;
  uint64_t v = 1;
  if (takt_shm_publisher_create(first, &topic_a, &p) != TAKT_OK ||
      takt_shm_subscriber_create(first, &topic_a, 1, &q) != TAKT_OK ||
      takt_shm_write(p, &v, sizeof v, TAKT_SHM_NOW, 0, 0) != TAKT_OK)
    __builtin_trap();

  char name[48];
  snprintf(name, sizeof name, "/takt.%s", domain);
  takt_port_shm_t m;
  if (takt_port_shm_open(name, &m) != TAKT_OK) __builtin_trap();
  /* the registry part: header (minus its lock), participants, directory */
  const size_t hdr_locked_from = offsetof(shm_hdr_t, reg_lock);
  const size_t hdr_end = hdr_locked_from + sizeof(takt_pmutex_t);
  const shm_hdr_t *h = m.addr;
  size_t region = (size_t)h->dir_offset + (size_t)h->max_topics * sizeof(shm_dir_t);
  for (size_t i = 0; i + 3 <= size;) {
    size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8) % region;
    size_t len = data[i + 2];
    i += 3;
    if (len > size - i) len = size - i;
    for (size_t k = 0; k < len; k++, off++)
      if (off < region && (off < hdr_locked_from || off >= hdr_end))
        ((uint8_t *)m.addr)[off] = data[i + k];
    i += len;
  }
  takt_port_shm_close(&m);

  c.create = false;
  takt_shm_t *second;
  if (takt_shm_attach(ctx, &c, &second) == TAKT_OK) {
    use(second);
    (void)takt_shm_detach(second);
  }
  use(first);
  takt_shm_sample_t smp;
  while (takt_shm_take(q, &smp) == TAKT_OK) (void)takt_shm_release(q, &smp);
  (void)takt_shm_detach(first);
  (void)takt_shm_unlink(domain);
  return 0;
}
