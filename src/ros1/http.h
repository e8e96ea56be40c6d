/* HTTP framing for XML-RPC (ROS 1 master and slave APIs): requests and responses with a
 * Content-Length body, HTTP/1.0 and HTTP/1.1 with keep-alive, bounded sizes, clear errors.
 * Parsing works on the bytes received so far; nothing allocates. */
#ifndef TAKT_ROS1_HTTP_H
#define TAKT_ROS1_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "takt/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct takt__http_info {
  uint32_t header_len;   /* bytes of the start line and headers, the blank line included */
  uint32_t body_len;     /* Content-Length */
  uint32_t total;        /* header_len + body_len: the message's bytes */
  bool keep_alive;       /* the connection stays open after this message */
  bool http10;           /* the message is HTTP/1.0 (answer in kind) */
  int32_t status;        /* responses: the status code */
  const char *error;     /* what was wrong (TAKT_EMALFORMED, TAKT_ESIZE) */
} takt__http_info_t;

/**
 * Look at the first len bytes received on a connection (cap: the most the receiver can hold).
 * TAKT_OK: one whole message is there (info filled; bytes beyond info->total belong to the next
 * one); TAKT_EAGAIN: more bytes are needed; TAKT_ESIZE: the message cannot fit in cap bytes;
 * TAKT_EMALFORMED: not a POST request (response false) / not an HTTP response (true), or a
 * missing or bad Content-Length. O(len).
 */
takt_err_t takt__http_parse(const uint8_t *buf, uint32_t len, uint32_t cap, bool response,
                            takt__http_info_t *info);

/** Write the head of a POST request of body_len bytes to host:port into out (cap bytes);
 * returns its length, or TAKT_ESIZE. */
int32_t takt__http_request_head(char *out, uint32_t cap, const char *host, uint16_t port,
                                uint32_t body_len, bool keep_alive);
/** The head of a 200 response with body_len bytes of text/xml; http10: answer as HTTP/1.0. */
int32_t takt__http_response_head(char *out, uint32_t cap, uint32_t body_len, bool keep_alive,
                                 bool http10);
/** A whole error response (e.g. 400 "Bad Request", 413, 405) closing the connection. */
int32_t takt__http_error(char *out, uint32_t cap, int32_t status, const char *reason);

/** Split "http://host:port/" into host (cap bytes) and port. TAKT_EINVAL if it is not one. */
takt_err_t takt__http_split_uri(const char *uri, const char *scheme, char *host, uint32_t cap,
                                uint16_t *port);

#ifdef __cplusplus
}
#endif
#endif
