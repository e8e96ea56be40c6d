/* Bridge descriptions on the wire (takt/bridge.h): the parts a describing side sends and their
 * assembly on the asking side. Portable: the microcontroller encodes, the host decodes. */
#include <string.h>

#include "takt/bridge.h"
#include "transport_impl.h"

#if TAKT_WITH_PUBSUB

enum { PART_HEADER = 4 }; /* version, part, parts, routes */

static uint32_t str_size(const char *s) { return 1u + (uint32_t)strlen(s); }

uint32_t takt__describe_route_size(const takt_bridge_described_route_t *r) {
  return 4u + str_size(r->topic) + str_size(r->type) + str_size(r->md5);
}

static uint32_t put_str(uint8_t *out, uint32_t at, const char *s) {
  uint32_t n = (uint32_t)strlen(s);
  out[at] = (uint8_t)n;
  memcpy(out + at + 1, s, n);
  return at + 1 + n;
}

int32_t takt__describe_part_begin(uint8_t *out, uint32_t cap, const char *node, uint8_t part,
                                  uint8_t parts) {
  if (strlen(node) >= TAKT_NAME_MAX || PART_HEADER + str_size(node) > cap) return TAKT_ESIZE;
  out[0] = TAKT_BRIDGE_DESCRIPTION_VERSION;
  out[1] = part;
  out[2] = parts;
  out[3] = 0;
  return (int32_t)put_str(out, PART_HEADER, node);
}

int32_t takt__describe_put_route(uint8_t *out, uint32_t cap, uint32_t at,
                                 const takt_bridge_described_route_t *r) {
  if (at + takt__describe_route_size(r) > cap || out[3] == UINT8_MAX) return TAKT_ESIZE;
  out[at] = (uint8_t)(r->entity & 0xFFu);
  out[at + 1] = (uint8_t)(r->entity >> 8);
  out[at + 2] = r->flags;
  out[at + 3] = r->priority;
  at = put_str(out, at + 4, r->topic);
  at = put_str(out, at, r->type);
  at = put_str(out, at, r->md5);
  out[3]++;
  return (int32_t)at;
}

void takt_bridge_description_init(takt_bridge_description_t *d) { memset(d, 0, sizeof *d); }

/* A name of at most cap - 1 bytes, printable, into dst; false if it does not fit or is not. */
static bool get_str(const uint8_t *p, uint32_t len, uint32_t *at, char *dst, uint32_t cap) {
  if (*at >= len) return false;
  uint32_t n = p[*at];
  if (n >= cap || *at + 1 + n > len) return false;
  for (uint32_t i = 0; i < n; i++)
    if (p[*at + 1 + i] < 0x21 || p[*at + 1 + i] > 0x7E) return false;
  memcpy(dst, p + *at + 1, n);
  dst[n] = '\0';
  *at += 1 + n;
  return true;
}

takt_err_t takt_bridge_description_add(takt_bridge_description_t *d, const uint8_t *p, uint32_t len) {
  if (d == NULL || (p == NULL && len > 0)) return TAKT_EINVAL;
  if (len < PART_HEADER || p[0] != TAKT_BRIDGE_DESCRIPTION_VERSION || p[2] == 0 ||
      p[2] > TAKT_BRIDGE_DESCRIPTION_MAX_PARTS || p[1] >= p[2])
    return TAKT_EMALFORMED;
  uint32_t part = p[1], parts = p[2], n = p[3], at = PART_HEADER;
  char node[TAKT_NAME_MAX];
  if (!get_str(p, len, &at, node, sizeof node) || node[0] == '\0') return TAKT_EMALFORMED;
  if (d->parts != 0 && (d->parts != parts || strcmp(d->node, node) != 0)) return TAKT_EMALFORMED;
  if (d->parts_seen & (1u << part)) return TAKT_OK; /* asked twice, answered twice */
  /* parse the whole part before taking any of it: a bad part leaves d as it was */
  takt_bridge_described_route_t r;
  uint32_t start = at;
  for (uint32_t i = 0; i < n; i++) {
    if (at + 4 > len) return TAKT_EMALFORMED;
    at += 4;
    if (!get_str(p, len, &at, r.topic, sizeof r.topic) || r.topic[0] == '\0' ||
        !get_str(p, len, &at, r.type, sizeof r.type) || r.type[0] == '\0' ||
        !get_str(p, len, &at, r.md5, sizeof r.md5) || (r.md5[0] != '\0' && strlen(r.md5) != 32))
      return TAKT_EMALFORMED;
  }
  if (at != len) return TAKT_EMALFORMED;
  if (d->n_routes + n > TAKT_BRIDGE_DESCRIPTION_MAX_ROUTES) return TAKT_EFULL;
  at = start;
  for (uint32_t i = 0; i < n; i++) {
    takt_bridge_described_route_t *o = &d->routes[d->n_routes++];
    o->entity = (uint16_t)(p[at] | (p[at + 1] << 8));
    o->flags = p[at + 2];
    o->priority = p[at + 3];
    at += 4;
    (void)get_str(p, len, &at, o->topic, sizeof o->topic);
    (void)get_str(p, len, &at, o->type, sizeof o->type);
    (void)get_str(p, len, &at, o->md5, sizeof o->md5);
  }
  memcpy(d->node, node, sizeof node);
  d->parts = parts;
  d->parts_seen |= 1u << part;
  return TAKT_OK;
}

bool takt_bridge_description_complete(const takt_bridge_description_t *d) {
  return d->parts != 0 && d->parts_seen == (d->parts >= 32 ? UINT32_MAX : (1u << d->parts) - 1u);
}

#endif /* TAKT_WITH_PUBSUB */
