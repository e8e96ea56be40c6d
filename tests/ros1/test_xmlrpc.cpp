// The ROS 1 layer's XML-RPC codec and HTTP framing: every type both ways, the shapes rospy and
// roscpp send, bounds (depth, values, sizes) and clear errors for bad input.
#include <gtest/gtest.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <locale.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ros1/http.h"
#include "ros1/xmlrpc.h"

namespace {

struct Doc {
  takt__xr_value_t v[64];
  takt__xr_doc_t d;
  std::string buf;
  Doc() { takt__xr_doc_init(&d, v, 64); }
  takt_err_t parse(const std::string &s, bool response) {
    buf = s;
    return takt__xr_parse(buf.data(), (uint32_t)buf.size(), response, &d);
  }
};

std::string str(const takt__xr_value_t *v) {
  return v && v->kind == TAKT__XR_STRING ? std::string(v->u.str.s, v->u.str.len) : "<not a string>";
}

}  // namespace

TEST(XmlRpc, ParsesACallWithEveryTypeAndImplicitStrings) {
  Doc d;
  const char *xml =
      "<?xml version='1.0'?>\n<methodCall>\n<methodName>registerPublisher</methodName>\n<params>"
      "<param><value><string>/talker</string></value></param>"
      "<param><value>/chatter &amp; more &lt;x&gt; &#65;&#x42;</value></param>"
      "<param><value><i4>-42</i4></value></param>"
      "<param><value><int>2147483647</int></value></param>"
      "<param><value><boolean>1</boolean></value></param>"
      "<param><value><double>-1.5e3</double></value></param>"
      "<param><value><array><data><value>a</value><value><i4>7</i4></value>"
      "<value><array><data></data></array></value></data></array></value></param>"
      "<param><value><struct><member><name>faultCode</name><value><int>3</int></value></member>"
      "<member><name>s</name><value><string/></value></member></struct></value></param>"
      "<param><value/></param>"
      "</params></methodCall>\n";
  ASSERT_EQ(d.parse(xml, false), TAKT_OK) << (d.d.error ? d.d.error : "");
  EXPECT_EQ(std::string(d.d.method, d.d.method_len), "registerPublisher");
  ASSERT_EQ(d.d.nparams, 9u);
  EXPECT_EQ(str(takt__xr_param(&d.d, 0)), "/talker");
  EXPECT_EQ(str(takt__xr_param(&d.d, 1)), "/chatter & more <x> AB");
  EXPECT_EQ(takt__xr_param(&d.d, 2)->u.i, -42);
  EXPECT_EQ(takt__xr_param(&d.d, 3)->u.i, 2147483647);
  EXPECT_EQ(takt__xr_param(&d.d, 4)->kind, TAKT__XR_BOOL);
  EXPECT_TRUE(takt__xr_param(&d.d, 4)->u.b);
  EXPECT_DOUBLE_EQ(takt__xr_param(&d.d, 5)->u.d, -1500.0);
  const takt__xr_value_t *arr = takt__xr_param(&d.d, 6);
  ASSERT_EQ(arr->kind, TAKT__XR_ARRAY);
  EXPECT_EQ(arr->u.list.count, 3u);
  EXPECT_EQ(str(takt__xr_at(&d.d, arr, 0)), "a");
  EXPECT_EQ(takt__xr_at(&d.d, arr, 1)->u.i, 7);
  EXPECT_EQ(takt__xr_at(&d.d, arr, 2)->u.list.count, 0u);
  EXPECT_EQ(takt__xr_at(&d.d, arr, 3), nullptr);
  const takt__xr_value_t *st = takt__xr_param(&d.d, 7);
  EXPECT_EQ(takt__xr_member(&d.d, st, "faultCode")->u.i, 3);
  EXPECT_EQ(str(takt__xr_member(&d.d, st, "s")), "");
  EXPECT_EQ(takt__xr_member(&d.d, st, "nope"), nullptr);
  EXPECT_EQ(str(takt__xr_param(&d.d, 8)), "");
  EXPECT_EQ(takt__xr_param(&d.d, 9), nullptr);
}

TEST(XmlRpc, ParsesResponsesAndFaults) {
  Doc d;
  ASSERT_EQ(d.parse("<?xml version=\"1.0\"?><methodResponse><params><param><value><array><data>"
                    "<value><int>1</int></value><value></value><value><array><data/></array>"
                    "</value></data></array></value></param></params></methodResponse>",
                    true),
            TAKT_OK);
  EXPECT_FALSE(d.d.fault);
  const takt__xr_value_t *r = takt__xr_param(&d.d, 0);
  EXPECT_EQ(r->u.list.count, 3u);
  EXPECT_EQ(takt__xr_at(&d.d, r, 0)->u.i, 1);
  EXPECT_EQ(str(takt__xr_at(&d.d, r, 1)), "");
  ASSERT_EQ(d.parse("<methodResponse><fault><value><struct><member><name>faultCode</name><value>"
                    "<int>-1</int></value></member><member><name>faultString</name><value>"
                    "<string>unknown method</string></value></member></struct></value></fault>"
                    "</methodResponse>",
                    true),
            TAKT_OK);
  EXPECT_TRUE(d.d.fault);
  EXPECT_EQ(str(takt__xr_member(&d.d, takt__xr_param(&d.d, 0), "faultString")), "unknown method");
}

TEST(XmlRpc, WriterOutputParsesBackToTheSameValues) {
  char buf[2048];
  takt__xr_writer_t w;
  takt__xr_w_init(&w, buf, sizeof buf);
  takt__xr_w_call_begin(&w, "getParam");
  takt__xr_w_param_begin(&w);
  takt__xr_w_string(&w, "a<b>&c");
  takt__xr_w_param_end(&w);
  takt__xr_w_param_begin(&w);
  takt__xr_w_array_begin(&w);
  takt__xr_w_int(&w, INT32_MIN);
  takt__xr_w_bool(&w, false);
  takt__xr_w_double(&w, 0.1);
  takt__xr_w_struct_begin(&w);
  takt__xr_w_member_begin(&w, "k");
  takt__xr_w_string(&w, "v");
  takt__xr_w_member_end(&w);
  takt__xr_w_struct_end(&w);
  takt__xr_w_array_end(&w);
  takt__xr_w_param_end(&w);
  takt__xr_w_call_end(&w);
  ASSERT_FALSE(w.overflow);
  Doc d;
  ASSERT_EQ(d.parse(std::string(buf, w.len), false), TAKT_OK) << d.d.error;
  EXPECT_EQ(str(takt__xr_param(&d.d, 0)), "a<b>&c");
  const takt__xr_value_t *a = takt__xr_param(&d.d, 1);
  EXPECT_EQ(takt__xr_at(&d.d, a, 0)->u.i, INT32_MIN);
  EXPECT_FALSE(takt__xr_at(&d.d, a, 1)->u.b);
  EXPECT_EQ(takt__xr_at(&d.d, a, 2)->u.d, 0.1);
  EXPECT_EQ(str(takt__xr_member(&d.d, takt__xr_at(&d.d, a, 3), "k")), "v");
  // re-encoding a decoded value gives the same text
  char again[2048];
  takt__xr_writer_t w2;
  takt__xr_w_init(&w2, again, sizeof again);
  takt__xr_w_value(&w2, &d.d, a);
  EXPECT_NE(std::string(buf).find(std::string(again, w2.len)), std::string::npos);
  // a writer that runs out of room says so
  takt__xr_writer_t small;
  char tiny[16];
  takt__xr_w_init(&small, tiny, sizeof tiny);
  takt__xr_w_call_begin(&small, "getParam");
  EXPECT_TRUE(small.overflow);
}

// A program that sets a locale with a decimal comma (a Qt application, setlocale(LC_ALL, "")):
// doubles are still written and read with a '.' as XML-RPC has them (it wrote "0,5", which
// rosmaster refuses, and took "0.5" for a bad number). The locale is made for the test with
// Debian's localedef (tools/deps.sh installs `locales`), and used in a child process (glibc
// keeps what it read of LOCPATH for good, which LeakSanitizer would count against the test).
TEST(XmlRpc, DoublesKeepTheirPointUnderADecimalCommaLocale) {
  std::string dir = "/tmp/takt-locale-" + std::to_string(getpid());
  std::string cmd = "mkdir -p " + dir + " && localedef -i de_DE -f UTF-8 " + dir + "/de_DE.UTF-8 >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child: the locale for its thread, then what the codec wrote and read
    close(fds[0]);
    setenv("LOCPATH", dir.c_str(), 1);
    locale_t de = newlocale(LC_ALL_MASK, "de_DE.UTF-8", (locale_t)0);
    if (de == (locale_t)0) _exit(2);
    uselocale(de);
    char probe[16], buf[256], line[512];
    std::snprintf(probe, sizeof probe, "%.1f", 0.5);
    takt__xr_writer_t w;
    takt__xr_w_init(&w, buf, sizeof buf);
    takt__xr_w_double(&w, 0.5);
    Doc d;
    takt_err_t rc = d.parse("<?xml version=\"1.0\"?><methodResponse><params><param><value><double>0.25"
                            "</double></value></param></params></methodResponse>", true);
    double got = rc == TAKT_OK ? takt__xr_param(&d.d, 0)->u.d : -1.0;
    uselocale(LC_GLOBAL_LOCALE);
    int n = std::snprintf(line, sizeof line, "%s|%.*s|%d|%.3f", probe, (int)w.len, buf, (int)rc, got);
    if (write(fds[1], line, (size_t)n) != n) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char b[512];
  ssize_t r;
  while ((r = read(fds[0], b, sizeof b)) > 0) got.append(b, (size_t)r);
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  std::system(("rm -rf " + dir).c_str());
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  // the locale does what the test is about (a decimal comma), and the codec keeps the point
  EXPECT_EQ(got, "0,5|<value><double>0.5</double></value>|0|0.250") << got;  // (the last in the C locale)
}

TEST(XmlRpc, FaultResponseHasCodeAndText) {
  char buf[512];
  takt__xr_writer_t w;
  takt__xr_w_init(&w, buf, sizeof buf);
  takt__xr_w_fault(&w, -1, "unknown method");
  Doc d;
  ASSERT_EQ(d.parse(std::string(buf, w.len), true), TAKT_OK);
  EXPECT_TRUE(d.d.fault);
  EXPECT_EQ(takt__xr_member(&d.d, takt__xr_param(&d.d, 0), "faultCode")->u.i, -1);
}

TEST(XmlRpc, BadInputIsRefusedWithAReason) {
  Doc d;
  struct Case {
    const char *xml;
    bool response;
    takt_err_t rc;
  } cases[] = {
      {"", false, TAKT_EMALFORMED},
      {"<methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName></methodName></methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName></methodCall>junk", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName><params><param><value><i4>99999999999</i4>"
       "</value></param></params></methodCall>", false, TAKT_ERANGE},
      {"<methodCall><methodName>x</methodName><params><param><value><i4>12a</i4>"
       "</value></param></params></methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName><params><param><value><boolean>2</boolean>"
       "</value></param></params></methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName><params><param><value><base64>AA==</base64>"
       "</value></param></params></methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x&bogus;</methodName></methodCall>", false, TAKT_EMALFORMED},
      {"<methodCall><methodName>x</methodName></methodCall>", true, TAKT_EMALFORMED},
      {"<methodResponse><params><param><value><struct><member><value>1</value></member>"
       "</struct></value></param></params></methodResponse>", true, TAKT_EMALFORMED},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(d.parse(c.xml, c.response), c.rc) << c.xml;
    EXPECT_NE(d.d.error, nullptr) << c.xml;
  }
}

TEST(XmlRpc, DepthAndValueCountAreBounded) {
  std::string deep = "<methodCall><methodName>x</methodName><params><param>";
  for (int i = 0; i < 40; i++) deep += "<value><array><data>";
  for (int i = 0; i < 40; i++) deep += "</data></array></value>";
  deep += "</param></params></methodCall>";
  Doc d;
  EXPECT_EQ(d.parse(deep, false), TAKT_ERANGE);
  std::string many = "<methodCall><methodName>x</methodName><params><param><value><array><data>";
  for (int i = 0; i < 100; i++) many += "<value><i4>1</i4></value>";
  many += "</data></array></value></param></params></methodCall>";
  EXPECT_EQ(d.parse(many, false), TAKT_EFULL);
  EXPECT_STREQ(d.d.error, "XML-RPC document has more values than the storage holds");
}

TEST(Http, RequestsOfBothVersionsWithKeepAlive) {
  takt__http_info_t info;
  std::string r = "POST /RPC2 HTTP/1.1\r\nHost: x\r\ncontent-length: 5\r\n\r\nhello";
  ASSERT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_OK);
  EXPECT_EQ(info.body_len, 5u);
  EXPECT_EQ(info.total, r.size());
  EXPECT_TRUE(info.keep_alive);
  EXPECT_FALSE(info.http10);
  r = "POST / HTTP/1.0\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_OK);
  EXPECT_FALSE(info.keep_alive);
  EXPECT_TRUE(info.http10);
  r = "POST / HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_OK);
  EXPECT_TRUE(info.keep_alive);
  r = "POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\nab";
  EXPECT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_EAGAIN);
  EXPECT_FALSE(info.keep_alive);
  r = "POST / HTTP/1.1\r\nContent-";
  EXPECT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_EAGAIN);
  r = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA";
  ASSERT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, true, &info), TAKT_OK);
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(info.total, r.size() - 5);
}

TEST(Http, BadOrOversizedMessagesAreRefusedWithAReason) {
  takt__http_info_t info;
  struct Case {
    std::string s;
    uint32_t cap;
    bool response;
    takt_err_t rc;
  } cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", 4096, false, TAKT_EMALFORMED},
      {"GET ", 4096, false, TAKT_EMALFORMED},
      {"POST / HTTP/1.1\r\n\r\n", 4096, false, TAKT_EMALFORMED},  // no Content-Length
      {"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 4096, false, TAKT_EMALFORMED},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 4096, false, TAKT_EMALFORMED},
      {"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 4096, false, TAKT_ESIZE},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 4096, false, TAKT_EMALFORMED},
      {"POST / HTTP/1.1\r\nHost: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 32, false, TAKT_ESIZE},
      {"HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n", 4096, true, TAKT_EMALFORMED},
      {"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", 4096, true, TAKT_EMALFORMED},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(takt__http_parse((const uint8_t *)c.s.data(), (uint32_t)c.s.size(), c.cap, c.response, &info), c.rc) << c.s;
    EXPECT_NE(info.error, nullptr) << c.s;
  }
}

TEST(Http, HeadsAndUris) {
  char b[256];
  int32_t n = takt__http_request_head(b, sizeof b, "127.0.0.1", 11311, 12, true);
  ASSERT_GT(n, 0);
  takt__http_info_t info;
  std::string r = std::string(b, (size_t)n) + "123456789012";
  EXPECT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, false, &info), TAKT_OK);
  n = takt__http_response_head(b, sizeof b, 0, false, true);
  r.assign(b, (size_t)n);
  EXPECT_EQ(takt__http_parse((const uint8_t *)r.data(), (uint32_t)r.size(), 4096, true, &info), TAKT_OK);
  EXPECT_FALSE(info.keep_alive);
  EXPECT_EQ(takt__http_request_head(b, 8, "h", 1, 0, true), TAKT_ESIZE);
  char host[64];
  uint16_t port = 0;
  EXPECT_EQ(takt__http_split_uri("http://localhost:11311/", "http", host, sizeof host, &port), TAKT_OK);
  EXPECT_STREQ(host, "localhost");
  EXPECT_EQ(port, 11311);
  EXPECT_EQ(takt__http_split_uri("rosrpc://h:5", "rosrpc", host, sizeof host, &port), TAKT_OK);
  EXPECT_EQ(takt__http_split_uri("http://h:99999/", "http", host, sizeof host, &port), TAKT_EINVAL);
  EXPECT_EQ(takt__http_split_uri("http://h/", "http", host, sizeof host, &port), TAKT_EINVAL);
  EXPECT_EQ(takt__http_split_uri("ftp://h:1/", "http", host, sizeof host, &port), TAKT_EINVAL);
}
