/* HTTP/1.0 and 1.1 framing for XML-RPC (http.h). */
#include "http.h"

#include <stdio.h>
#include <string.h>

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static bool eq_nocase(const uint8_t *a, uint32_t n, const char *b) {
  if (strlen(b) != n) return false;
  for (uint32_t i = 0; i < n; i++)
    if (lower((char)a[i]) != lower(b[i])) return false;
  return true;
}

static bool contains_nocase(const uint8_t *a, uint32_t n, const char *word) {
  size_t w = strlen(word);
  for (uint32_t i = 0; i + w <= n; i++)
    if (eq_nocase(a + i, (uint32_t)w, word)) return true;
  return false;
}

static takt_err_t bad(takt__http_info_t *info, takt_err_t rc, const char *what) {
  info->error = what;
  return rc;
}

takt_err_t takt__http_parse(const uint8_t *buf, uint32_t len, uint32_t cap, bool response,
                            takt__http_info_t *info) {
  memset(info, 0, sizeof *info);
  /* the end of the head */
  uint32_t head = 0;
  for (uint32_t i = 0; i + 3 < len; i++) {
    if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
      head = i + 4;
      break;
    }
  }
  if (head == 0) {
    if (len >= cap) return bad(info, TAKT_ESIZE, "HTTP head larger than the buffer");
    /* reject garbage early: a request starts with a method, a response with HTTP/ */
    const char *want = response ? "HTTP/" : "POST ";
    uint32_t n = (uint32_t)strlen(want) < len ? (uint32_t)strlen(want) : len;
    if (memcmp(buf, want, n) != 0)
      return bad(info, TAKT_EMALFORMED, response ? "not an HTTP response" : "not an HTTP POST request");
    return TAKT_EAGAIN;
  }
  /* start line */
  uint32_t eol = 0;
  while (eol + 1 < head && !(buf[eol] == '\r' && buf[eol + 1] == '\n')) eol++;
  bool http11;
  if (response) {
    if (eol < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') ||
        buf[8] != ' ')
      return bad(info, TAKT_EMALFORMED, "not an HTTP/1.x response");
    http11 = buf[7] == '1';
    int32_t st = 0;
    for (uint32_t i = 9; i < 12; i++) {
      if (buf[i] < '0' || buf[i] > '9') return bad(info, TAKT_EMALFORMED, "bad HTTP status code");
      st = st * 10 + (buf[i] - '0');
    }
    info->status = st;
  } else {
    if (eol < 14 || memcmp(buf, "POST ", 5) != 0)
      return bad(info, TAKT_EMALFORMED, "not an HTTP POST request");
    if (memcmp(buf + eol - 9, " HTTP/1.", 8) != 0 || (buf[eol - 1] != '0' && buf[eol - 1] != '1'))
      return bad(info, TAKT_EMALFORMED, "not an HTTP/1.x request");
    http11 = buf[eol - 1] == '1';
  }
  info->keep_alive = http11;
  info->http10 = !http11;
  /* headers */
  bool have_length = false;
  uint64_t length = 0;
  uint32_t p = eol + 2;
  while (p + 1 < head) {
    uint32_t e = p;
    while (e + 1 < head && !(buf[e] == '\r' && buf[e + 1] == '\n')) e++;
    if (e == p) break; /* the blank line */
    uint32_t colon = p;
    while (colon < e && buf[colon] != ':') colon++;
    if (colon == e || colon == p) return bad(info, TAKT_EMALFORMED, "bad HTTP header line");
    uint32_t v = colon + 1;
    while (v < e && (buf[v] == ' ' || buf[v] == '\t')) v++;
    uint32_t vend = e;
    while (vend > v && (buf[vend - 1] == ' ' || buf[vend - 1] == '\t')) vend--;
    if (eq_nocase(buf + p, colon - p, "content-length")) {
      if (vend == v || have_length) return bad(info, TAKT_EMALFORMED, "bad HTTP Content-Length");
      for (uint32_t i = v; i < vend; i++) {
        if (buf[i] < '0' || buf[i] > '9' || length > 0xFFFFFFFFull)
          return bad(info, TAKT_EMALFORMED, "bad HTTP Content-Length");
        length = length * 10 + (uint64_t)(buf[i] - '0');
      }
      have_length = true;
    } else if (eq_nocase(buf + p, colon - p, "connection")) {
      if (contains_nocase(buf + v, vend - v, "close")) info->keep_alive = false;
      else if (contains_nocase(buf + v, vend - v, "keep-alive")) info->keep_alive = true;
    } else if (eq_nocase(buf + p, colon - p, "transfer-encoding")) {
      return bad(info, TAKT_EMALFORMED, "HTTP Transfer-Encoding is not supported");
    }
    p = e + 2;
  }
  if (!have_length) return bad(info, TAKT_EMALFORMED, "HTTP message without Content-Length");
  if ((uint64_t)head + length > cap) return bad(info, TAKT_ESIZE, "HTTP message larger than the buffer");
  info->header_len = head;
  info->body_len = (uint32_t)length;
  info->total = head + (uint32_t)length;
  return len >= info->total ? TAKT_OK : TAKT_EAGAIN;
}

static int32_t fit(int n, uint32_t cap) { return n < 0 || (uint32_t)n >= cap ? TAKT_ESIZE : n; }

int32_t takt__http_request_head(char *out, uint32_t cap, const char *host, uint16_t port,
                                uint32_t body_len, bool keep_alive) {
  return fit(snprintf(out, cap,
                      "POST /RPC2 HTTP/1.1\r\nHost: %s:%u\r\nUser-Agent: takt\r\n"
                      "Content-Type: text/xml\r\nContent-Length: %lu\r\nConnection: %s\r\n\r\n",
                      host, (unsigned)port, (unsigned long)body_len,
                      keep_alive ? "keep-alive" : "close"),
             cap);
}

int32_t takt__http_response_head(char *out, uint32_t cap, uint32_t body_len, bool keep_alive,
                                 bool http10) {
  return fit(snprintf(out, cap,
                      "HTTP/1.%c 200 OK\r\nServer: takt\r\nContent-Type: text/xml\r\n"
                      "Content-Length: %lu\r\nConnection: %s\r\n\r\n",
                      http10 ? '0' : '1', (unsigned long)body_len,
                      keep_alive ? "keep-alive" : "close"),
             cap);
}

int32_t takt__http_error(char *out, uint32_t cap, int32_t status, const char *reason) {
  return fit(snprintf(out, cap,
                      "HTTP/1.1 %ld %s\r\nServer: takt\r\nContent-Type: text/plain\r\n"
                      "Content-Length: %lu\r\nConnection: close\r\n\r\n%s\n",
                      (long)status, reason, (unsigned long)strlen(reason) + 1, reason),
             cap);
}

takt_err_t takt__http_split_uri(const char *uri, const char *scheme, char *host, uint32_t cap,
                                uint16_t *port) {
  size_t sl = strlen(scheme);
  if (uri == NULL || strncmp(uri, scheme, sl) != 0 || strncmp(uri + sl, "://", 3) != 0)
    return TAKT_EINVAL;
  const char *h = uri + sl + 3, *colon = strchr(h, ':');
  if (colon == NULL || colon == h || (uint32_t)(colon - h) >= cap) return TAKT_EINVAL;
  uint32_t p = 0;
  const char *q = colon + 1;
  if (*q < '0' || *q > '9') return TAKT_EINVAL;
  while (*q >= '0' && *q <= '9') {
    p = p * 10 + (uint32_t)(*q - '0');
    if (p > 65535) return TAKT_EINVAL;
    q++;
  }
  if (p == 0 || (*q != '\0' && *q != '/')) return TAKT_EINVAL;
  memcpy(host, h, (size_t)(colon - h));
  host[colon - h] = '\0';
  *port = (uint16_t)p;
  return TAKT_OK;
}
