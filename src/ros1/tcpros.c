/* TCPROS connection header codec (tcpros.h). */
#include "tcpros.h"

#include <string.h>

takt_err_t takt__tcpros_parse(const uint8_t *body, uint32_t len, takt__tcpros_header_t *h) {
  h->n = 0;
  h->error = NULL;
  uint32_t p = 0;
  while (p < len) {
    if (len - p < 4) {
      h->error = "truncated TCPROS header field length";
      return TAKT_EMALFORMED;
    }
    uint32_t fl = takt__le32(body + p);
    p += 4;
    if (fl > len - p) {
      h->error = "TCPROS header field runs past the end of the header";
      return TAKT_EMALFORMED;
    }
    const char *f = (const char *)body + p;
    const char *eq = memchr(f, '=', fl);
    if (eq == NULL || eq == f) {
      h->error = eq == NULL ? "TCPROS header field without '='" : "TCPROS header field with an empty key";
      return TAKT_EMALFORMED;
    }
    if (h->n == h->cap) {
      h->error = "TCPROS header has too many fields";
      return TAKT_EFULL;
    }
    takt__tcpros_field_t *x = &h->f[h->n++];
    x->key = f;
    x->key_len = (uint32_t)(eq - f);
    x->value = eq + 1;
    x->value_len = fl - x->key_len - 1;
    p += fl;
  }
  return TAKT_OK;
}

const char *takt__tcpros_get(const takt__tcpros_header_t *h, const char *key, uint32_t *len) {
  size_t kl = strlen(key);
  for (uint32_t i = 0; i < h->n; i++) {
    if (h->f[i].key_len == kl && memcmp(h->f[i].key, key, kl) == 0) {
      if (len != NULL) *len = h->f[i].value_len;
      return h->f[i].value;
    }
  }
  return NULL;
}

bool takt__tcpros_copy(const takt__tcpros_header_t *h, const char *key, char *out, size_t cap) {
  uint32_t n = 0;
  const char *v = takt__tcpros_get(h, key, &n);
  if (v == NULL) n = 0;
  if (n > cap - 1) n = (uint32_t)(cap - 1);
  if (n > 0) memcpy(out, v, n);
  out[n] = '\0';
  return v != NULL;
}

bool takt__tcpros_is(const takt__tcpros_header_t *h, const char *key, const char *s) {
  uint32_t n;
  const char *v = takt__tcpros_get(h, key, &n);
  return v != NULL && n == strlen(s) && memcmp(v, s, n) == 0;
}

void takt__tcpros_w_init(takt__tcpros_writer_t *w, uint8_t *buf, uint32_t cap) {
  w->buf = buf;
  w->cap = cap;
  w->len = 4;
  w->overflow = cap < 4;
}

void takt__tcpros_w_field_n(takt__tcpros_writer_t *w, const char *key, uint32_t key_len,
                            const char *value, uint32_t value_len) {
  size_t kl = key_len, vl = value_len, fl = kl + 1 + vl;
  if (w->overflow || fl > 0xFFFFFFF0u || 4 + fl > (size_t)(w->cap - w->len)) {
    w->overflow = true;
    return;
  }
  takt__put_le32(w->buf + w->len, (uint32_t)fl);
  memcpy(w->buf + w->len + 4, key, kl);
  w->buf[w->len + 4 + kl] = '=';
  if (vl > 0) memcpy(w->buf + w->len + 5 + kl, value, vl);
  w->len += (uint32_t)(4 + fl);
}

void takt__tcpros_w_field(takt__tcpros_writer_t *w, const char *key, const char *value) {
  takt__tcpros_w_field_n(w, key, (uint32_t)strlen(key), value, (uint32_t)strlen(value));
}

int32_t takt__tcpros_w_end(takt__tcpros_writer_t *w) {
  if (w->overflow || w->len > 0x7FFFFFFFu) return TAKT_ESIZE;
  takt__put_le32(w->buf, w->len - 4);
  return (int32_t)w->len;
}
