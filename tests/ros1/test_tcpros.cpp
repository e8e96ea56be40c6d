// TCPROS connection headers: what rospy and roscpp send, encoded and parsed back; bad headers
// refused with a reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ros1/tcpros.h"

namespace {
std::vector<uint8_t> field(const std::string &f) {
  std::vector<uint8_t> v(4);
  takt__put_le32(v.data(), (uint32_t)f.size());
  v.insert(v.end(), f.begin(), f.end());
  return v;
}
}  // namespace

TEST(Tcpros, HeaderRoundTripsAndFindsFields) {
  uint8_t buf[512];
  takt__tcpros_writer_t w;
  takt__tcpros_w_init(&w, buf, sizeof buf);
  takt__tcpros_w_field(&w, "callerid", "/takt");
  takt__tcpros_w_field(&w, "topic", "/chatter");
  takt__tcpros_w_field(&w, "md5sum", "*");
  takt__tcpros_w_field(&w, "message_definition", "string data\n# a=b");
  takt__tcpros_w_field(&w, "latching", "");
  int32_t n = takt__tcpros_w_end(&w);
  ASSERT_GT(n, 4);
  EXPECT_EQ(takt__le32(buf), (uint32_t)n - 4);
  takt__tcpros_field_t f[8];
  takt__tcpros_header_t h = {f, 8, 0, nullptr};
  ASSERT_EQ(takt__tcpros_parse(buf + 4, (uint32_t)n - 4, &h), TAKT_OK);
  EXPECT_EQ(h.n, 5u);
  uint32_t len = 0;
  const char *v = takt__tcpros_get(&h, "message_definition", &len);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(std::string(v, len), "string data\n# a=b");  // only the first '=' splits
  EXPECT_TRUE(takt__tcpros_is(&h, "md5sum", "*"));
  EXPECT_TRUE(takt__tcpros_is(&h, "latching", ""));
  EXPECT_FALSE(takt__tcpros_is(&h, "tcp_nodelay", "1"));
  EXPECT_EQ(takt__tcpros_get(&h, "nope", &len), nullptr);
  char out[6];  // a value copied out: whole, cut to fit, or "" when absent
  EXPECT_TRUE(takt__tcpros_copy(&h, "md5sum", out, sizeof out));
  EXPECT_STREQ(out, "*");
  EXPECT_TRUE(takt__tcpros_copy(&h, "topic", out, sizeof out));
  EXPECT_STREQ(out, "/chat");
  EXPECT_TRUE(takt__tcpros_copy(&h, "latching", out, sizeof out));
  EXPECT_STREQ(out, "");
  EXPECT_FALSE(takt__tcpros_copy(&h, "nope", out, sizeof out));
  EXPECT_STREQ(out, "");
  takt__tcpros_w_init(&w, buf, 16);
  takt__tcpros_w_field(&w, "callerid", "/a-long-name");
  EXPECT_EQ(takt__tcpros_w_end(&w), TAKT_ESIZE);
}

TEST(Tcpros, BadHeadersAreRefusedWithAReason) {
  takt__tcpros_field_t f[2];
  struct Case {
    std::vector<uint8_t> bytes;
    takt_err_t rc;
    const char *why;
  };
  std::vector<uint8_t> run_past = field("topic=/x");
  run_past[0] = 200;
  std::vector<uint8_t> three;
  for (const char *s : {"a=1", "b=2", "c=3"}) {
    auto x = field(s);
    three.insert(three.end(), x.begin(), x.end());
  }
  std::vector<Case> cases = {
      {{1, 0}, TAKT_EMALFORMED, "truncated TCPROS header field length"},
      {run_past, TAKT_EMALFORMED, "TCPROS header field runs past the end of the header"},
      {{0xFF, 0xFF, 0xFF, 0xFF, 'a'}, TAKT_EMALFORMED, "TCPROS header field runs past the end of the header"},
      {field("novalue"), TAKT_EMALFORMED, "TCPROS header field without '='"},
      {field("=x"), TAKT_EMALFORMED, "TCPROS header field with an empty key"},
      {three, TAKT_EFULL, "TCPROS header has too many fields"},
  };
  for (const Case &c : cases) {
    takt__tcpros_header_t h = {f, 2, 0, nullptr};
    EXPECT_EQ(takt__tcpros_parse(c.bytes.data(), (uint32_t)c.bytes.size(), &h), c.rc);
    EXPECT_STREQ(h.error, c.why);
  }
  takt__tcpros_header_t h = {f, 2, 0, nullptr};
  EXPECT_EQ(takt__tcpros_parse(nullptr, 0, &h), TAKT_OK);  // an empty header has no fields
  EXPECT_EQ(h.n, 0u);
}
