// Generated messages from C++: they read like roscpp messages, share the C structs' layout, and
// go through the core with their type support.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "geometry_msgs/PoseStamped.h"
#include "sensor_msgs/JointState.h"
#include "sensor_msgs/PointCloud2.h"
#include "std_msgs/Float64MultiArray.h"
#include "std_msgs/String.h"
#include "std_srvs/SetBool.h"
#include "std_srvs/Trigger.h"
#include "takt/takt.h"
#include "takt_test_msgs/Constants.h"
#include "takt_test_msgs/Keywords.h"
#include "takt_test_msgs/Names.h"
#include "takt_test_msgs/Trigraphs.h"

#include "../common.hpp"  // msgs/CMakeLists.txt builds this test without tests/ on the path

TEST(MessagesCpp, ReadLikeRoscpp) {
  std_msgs::String msg;
  msg.data = "hi";
  EXPECT_EQ(msg.data, "hi");
  EXPECT_EQ(msg.data.size(), 2u);
  EXPECT_STREQ(takt::datatype<std_msgs::String>(), "std_msgs/String");
  EXPECT_STREQ(takt::md5sum<std_msgs::String>(), "992ce8a1687cec8c8bd883ec73ca41d1");

  sensor_msgs::JointState js;
  js.header.frame_id = std::string("base_link");
  js.name.push_back("shoulder");
  js.name.push_back("elbow");
  js.position.push_back(0.5);
  EXPECT_EQ(js.name.size(), 2u);
  EXPECT_EQ(js.name[1].str(), "elbow");
  double sum = 0;
  for (double p : js.position) sum += p;
  EXPECT_DOUBLE_EQ(sum, 0.5);

  std_srvs::SetBool srv;
  srv.request.data = true;
  srv.response.message = "done";
  EXPECT_TRUE(srv.request.data);
  EXPECT_STREQ(takt::md5sum<std_srvs::SetBool>(), "09fb03525b03e7ea1fd3992bafd87e16");
}

// Fields named as the helpers of a generated type could be (sensor_msgs/PointField's datatype, a
// plane's c): the types compile as C++, the fields are plain fields, and the helpers are reached
// through takt::datatype<T>() and friends.
TEST(MessagesCpp, FieldsNamedLikeTheHelpers) {
  static sensor_msgs::PointCloud2 pc;
  sensor_msgs::PointField f;
  f.name = "x";
  f.datatype = sensor_msgs::PointField::FLOAT32;
  f.count = 1;
  ASSERT_TRUE(pc.fields.push_back(f));
  EXPECT_STREQ(takt::datatype<sensor_msgs::PointField>(), "sensor_msgs/PointField");
  EXPECT_STREQ(takt::datatype(pc), "sensor_msgs/PointCloud2");
  EXPECT_STREQ(takt::md5sum(pc), sensor_msgs__PointCloud2__MD5);
  EXPECT_EQ(takt::c_struct(pc).fields.data[0].datatype, 7);

  takt_test_msgs::Names n;
  n.c = 2.5;
  n.datatype = 3;
  n.md5sum = "m";
  n.definition = "d";
  n.type_support = 4;
  n.CType = 5;
  n.c_struct = 6;
  EXPECT_STREQ(takt::datatype(n), "takt_test_msgs/Names");
  EXPECT_STREQ(takt::md5sum<takt_test_msgs::Names>(), takt_test_msgs__Names__MD5);
  EXPECT_STREQ(takt::definition(n), takt_test_msgs__Names__DEFINITION);
  EXPECT_EQ(takt::type_support<takt_test_msgs::Names>(), &takt_test_msgs__Names__type);
  uint8_t buf[128];
  int32_t len = takt_test_msgs__Names__ros1_serialize(&takt::c_struct(n), buf, sizeof buf);
  ASSERT_GT(len, 0);
  takt_test_msgs::Names back;
  ASSERT_EQ(takt_test_msgs__Names__ros1_deserialize(&takt::c_struct(back), buf,
                                                     static_cast<uint32_t>(len)),
            TAKT_OK);
  EXPECT_DOUBLE_EQ(back.c, 2.5);
  EXPECT_EQ(back.datatype, 3);
  EXPECT_EQ(back.md5sum, "m");
  EXPECT_EQ(back.definition, "d");
  EXPECT_EQ(back.type_support, 4);
  EXPECT_EQ(back.CType, 5);
  EXPECT_EQ(back.c_struct, 6);
}

// A service's halves are named on DDS as ROS 2 names them and the DDS backend types a service's
// topics (pkg::srv::dds_::Srv_Request_): the macros and the hash of the CDR type supports.
TEST(MessagesCpp, ServiceHalvesHaveTheDdsNamesOfRos2) {
  EXPECT_STREQ(std_srvs__SetBool__DDS_REQUEST_NAME, "std_srvs::srv::dds_::SetBool_Request_");
  EXPECT_STREQ(std_srvs__SetBool__DDS_RESPONSE_NAME, "std_srvs::srv::dds_::SetBool_Response_");
  EXPECT_STREQ(std_srvs__SetBoolRequest__DDS_NAME, "std_srvs::srv::dds_::SetBool_Request_");
  EXPECT_STREQ(std_srvs__SetBoolResponse__type_cdr.hash, "std_srvs::srv::dds_::SetBool_Response_");
  EXPECT_STREQ(std_srvs__TriggerRequest__type_cdr.hash, "std_srvs::srv::dds_::Trigger_Request_");
  EXPECT_STREQ(std_msgs__String__DDS_NAME, "std_msgs::msg::dds_::String_");
}

TEST(MessagesCpp, BoundedContainersRefuseToOverflow) {
  sensor_msgs::JointState js;
  for (uint32_t i = 0; i < js.position.capacity(); i++) ASSERT_TRUE(js.position.push_back(1.0));
  EXPECT_FALSE(js.position.push_back(2.0));
  EXPECT_FALSE(js.position.resize(js.position.capacity() + 1));
  std_msgs::String s;
  std::string long_text(1000, 'x');
  s.data = long_text;
  EXPECT_EQ(s.data.size(), s.data.capacity());  // truncated at the capacity, never beyond
}

TEST(MessagesCpp, SameBytesAsTheCStructAndBack) {
  geometry_msgs::PoseStamped p;
  p.header.seq = 7;
  p.header.stamp = takt::Time{12, 34};
  p.header.frame_id = "map";
  p.pose.position.x = 1.5;
  p.pose.orientation.w = 1.0;
  uint8_t buf[512];
  geometry_msgs__PoseStamped &pc = takt::c_struct(p);  // the C struct, in place
  static_assert(std::is_same_v<takt::CStruct<decltype(p)>, geometry_msgs__PoseStamped>);
  int32_t n = geometry_msgs__PoseStamped__ros1_serialize(&pc, buf, sizeof buf);
  ASSERT_GT(n, 0);
  geometry_msgs::PoseStamped q;
  geometry_msgs__PoseStamped *qc = &takt::c_struct(q);
  const uint32_t len = static_cast<uint32_t>(n);
  ASSERT_EQ(geometry_msgs__PoseStamped__ros1_deserialize(qc, buf, len), TAKT_OK);
  EXPECT_EQ(q.header.frame_id, "map");
  EXPECT_EQ(q.header.stamp, (takt::Time{12, 34}));
  EXPECT_DOUBLE_EQ(q.pose.position.x, 1.5);
  // malformed input: an error, never an overflow
  EXPECT_EQ(geometry_msgs__PoseStamped__ros1_deserialize(qc, buf, len - 1), TAKT_EMALFORMED);
  buf[15] = 0xff;  // top byte of frame_id's length (offset 12): far beyond the capacity
  EXPECT_EQ(geometry_msgs__PoseStamped__ros1_deserialize(qc, buf, len), TAKT_ESIZE);
  EXPECT_EQ(geometry_msgs__PoseStamped__ros1_serialize(&pc, buf, 10), TAKT_ESIZE);
}

extern "C" int takt_test_c_constants(void);  // test_msgs_c.c

// Constants at the edges of their types (inf, nan, INT64_MIN, a float32 beyond float's range) and
// constants named as the type's generated identifiers (NAME is NAME_ in C and C++; the type's
// name stays pkg__Type__NAME), in C (test_msgs_c.c) and in C++, where every constant is a member.
TEST(MessagesCpp, ConstantsOfEveryValueAndName) {
  EXPECT_EQ(takt_test_c_constants(), 0) << "the line in test_msgs_c.c";
  using C = takt_test_msgs::Constants;
  static_assert(C::INF > 0 && C::NEG_INF < 0);
  EXPECT_TRUE(std::isinf(C::INF) && std::isinf(C::NEG_INF) && std::isinf(C::BEYOND_FLOAT));
  EXPECT_TRUE(std::isnan(C::NOT_A_NUMBER));
  static_assert(C::FLOAT_MAX == 3.4028234663852886e38f);
  static_assert(C::MIN == INT64_MIN && C::MAX == UINT64_MAX && C::I32_MIN == INT32_MIN);
  static_assert(C::NAME_ == 1 && C::MD5_ == 5 && C::DDS_NAME_ == 2 && C::type_ == 3);
  static_assert(C::init_ == 4 && C::randomize_ == 5 && C::and_ == 6);
  EXPECT_STREQ(C::DEFINITION_, "def");
  EXPECT_STREQ(takt::datatype<C>(), "takt_test_msgs/Constants");
}

extern "C" double takt_test_c_keywords(void);  // test_msgs_c.c

// Fields named as keywords of C or C++ (and, or, not, true, class, typeof, ...) or as macros the
// headers see (NULL, errno) are name_ in C and C++; on the wire and in the definition they are
// what the .msg file says.
TEST(MessagesCpp, FieldsNamedAsKeywords) {
  static takt_test_msgs::Keywords k, back;
  k.and_ = 1.5;
  k.errno_ = 2.5;
  k.true_ = true;
  k.NULL_ = true;
  k.int_ = "int";
  ASSERT_TRUE(k.or_.push_back(7));
  ASSERT_TRUE(k.not_.push_back(8));
  uint8_t buf[4096];
  int32_t n = takt_test_msgs__Keywords__cdr_serialize(&takt::c_struct(k), buf, sizeof buf);
  ASSERT_GT(n, 0);
  ASSERT_EQ(takt_test_msgs__Keywords__cdr_deserialize(&takt::c_struct(back), buf,
                                                       static_cast<uint32_t>(n)),
            TAKT_OK);
  EXPECT_DOUBLE_EQ(back.and_, 1.5);
  EXPECT_DOUBLE_EQ(back.errno_, 2.5);
  EXPECT_TRUE(back.true_ && back.NULL_ && !back.false_);
  EXPECT_EQ(back.int_, "int");
  EXPECT_EQ(back.or_[0], 7);
  EXPECT_EQ(back.not_[0], 8);
  EXPECT_NE(std::strstr(takt::definition(k), "\nuint8[] or\n"), nullptr);
  EXPECT_DOUBLE_EQ(takt_test_c_keywords(), 4.0);  // the C struct's names
}

extern "C" const char *takt_test_c_note(void);  // test_msgs_c.c

// Question marks in a definition or a string constant stay question marks in C11, where ??! and
// the like are trigraphs.
TEST(MessagesCpp, QuestionMarksAreNotTrigraphs) {
  EXPECT_STREQ(takt_test_c_note(), "why\?\?! or \?\?/ or \?\?=");
  EXPECT_STREQ(takt_test_msgs::Trigraphs::NOTE, "why\?\?! or \?\?/ or \?\?=");
  EXPECT_STREQ(takt_test_msgs__Trigraphs__DEFINITION,
               "# A range (in meters\?\?) of the sensor: in C11 a literal's "
               "\?\?) \?\?! \?\?< \?\?> \?\?( \?\?= \?\?' \?\?/ \?\?-\n"
               "# are trigraphs unless the question marks are escaped.\n"
               "string NOTE=why\?\?! or \?\?/ or \?\?=\nfloat32 range\n");
}

// A C caller sets .size by hand. More than the capacity is TAKT_ESIZE from every encoder and size
// function, of either encoding: nothing past the field is read (the sanitizer build checks it) and
// no length wraps (8 * 0x20000001 is 8 in 32 bits).
static uint8_t out[1 << 16];
static int32_t err_of(int32_t n) { return n < 0 ? n : TAKT_OK; }
// The outcome of T's size and serialize functions, ROS 1 and CDR: TAKT_OK (a length) or the error.
#define ENCODE_ALL(T, m)                                                                         \
  (std::array<int32_t, 4>{err_of(T##__ros1_size(&(m))), err_of(T##__cdr_size(&(m))),             \
                          err_of(T##__ros1_serialize(&(m), out, sizeof out)),                     \
                          err_of(T##__cdr_serialize(&(m), out, sizeof out))})
static const std::array<int32_t, 4> kAllOk{TAKT_OK, TAKT_OK, TAKT_OK, TAKT_OK};
static const std::array<int32_t, 4> kAllEsize{TAKT_ESIZE, TAKT_ESIZE, TAKT_ESIZE, TAKT_ESIZE};

TEST(MessagesCpp, EncodersRefuseASizeBeyondTheCapacity) {
  std_msgs__String s;
  std_msgs__String__init(&s);
  s.data.size = 255;  // the capacity
  EXPECT_EQ(ENCODE_ALL(std_msgs__String, s), kAllOk);
  EXPECT_EQ(std_msgs__String__ros1_size(&s), 4 + 255);
  s.data.size = 300;
  EXPECT_EQ(ENCODE_ALL(std_msgs__String, s), kAllEsize);

  static std_msgs__Float64MultiArray a;
  std_msgs__Float64MultiArray__init(&a);
  a.data.size = 4096;  // the capacity
  EXPECT_EQ(ENCODE_ALL(std_msgs__Float64MultiArray, a), kAllOk);
  for (uint32_t size : {4097u, 0x20000001u, 0xffffffffu}) {
    a.data.size = size;
    EXPECT_EQ(ENCODE_ALL(std_msgs__Float64MultiArray, a), kAllEsize);
  }
  a.data.size = 0;
  a.layout.dim.size = 9;  // a nested sequence of structs (capacity 8)
  EXPECT_EQ(ENCODE_ALL(std_msgs__Float64MultiArray, a), kAllEsize);
  a.layout.dim.size = 1;
  a.layout.dim.data[0].label.size = 64;  // a string in it (capacity 63)
  EXPECT_EQ(ENCODE_ALL(std_msgs__Float64MultiArray, a), kAllEsize);

  static sensor_msgs__JointState js;
  sensor_msgs__JointState__init(&js);
  js.name.size = 40;  // capacity 32: the loop would read the next fields as strings
  EXPECT_EQ(ENCODE_ALL(sensor_msgs__JointState, js), kAllEsize);
  js.name.size = 1;
  js.name.data[0].size = 64;  // a string in a string array (capacity 63)
  EXPECT_EQ(ENCODE_ALL(sensor_msgs__JointState, js), kAllEsize);
  js.name.data[0].size = 63;
  EXPECT_EQ(ENCODE_ALL(sensor_msgs__JointState, js), kAllOk);
  js.header.frame_id.size = 256;  // in a nested struct
  EXPECT_EQ(ENCODE_ALL(sensor_msgs__JointState, js), kAllEsize);
}

// A message filled from raw bytes (a peer's, a synthetic payload) may hold any byte in a bool:
// the codecs write 0 or 1 and never load the byte as a bool (undefined for other values; the
// sanitizer build checks it), on both encodings.
TEST(MessagesCpp, ABoolOfAnyByteIsWrittenAsZeroOrOne) {
  std_srvs__SetBoolResponse r;
  std::memset(&r, 0, sizeof r);
  const uint8_t raw[] = {2, 0x80, 0xff, 1, 0};
  for (uint8_t b : raw) {
    std::memcpy(&r.success, &b, 1);
    uint8_t buf[64];
    ASSERT_GT(std_srvs__SetBoolResponse__ros1_serialize(&r, buf, sizeof buf), 0);
    EXPECT_EQ(buf[0], b != 0 ? 1 : 0) << int(b);
    ASSERT_GT(std_srvs__SetBoolResponse__cdr_serialize(&r, buf, sizeof buf), 0);
    EXPECT_EQ(buf[4], b != 0 ? 1 : 0) << int(b); // after the encapsulation header
  }
}

void on_string(takt_subscription_t *, const takt_message_t *m, void *user) {
  *static_cast<std::string *>(user) = static_cast<const std_msgs::String *>(m->data)->data.str();
}

TEST(MessagesCpp, ThroughTheCoreWithTheGeneratedTypeSupport) {
  takt_context_config_t cfg = TAKT_CONTEXT_CONFIG_DEFAULT;
  takt_context_t *ctx;
  ASSERT_EQ(takt_context_create(&cfg, &ctx), TAKT_OK);
  const takt_pool_usage_t baseline = takt_test::pool_usage(ctx);
  takt_node_t *n;
  takt_topic_t *t;
  takt_publisher_t *p;
  takt_subscription_t *s;
  std::string got;
  ASSERT_EQ(takt_node_create(ctx, "talker", &n), TAKT_OK);
  const takt_type_support_t *ts = takt::type_support<std_msgs::String>();
  ASSERT_EQ(takt_topic_create(ctx, "chatter", ts, 2, &t), TAKT_OK);
  EXPECT_STREQ(takt_topic_type(t)->hash, "992ce8a1687cec8c8bd883ec73ca41d1");
  ASSERT_EQ(takt_publisher_create(n, t, &p), TAKT_OK);
  ASSERT_EQ(takt_subscription_create(n, t, "listener", on_string, &got, nullptr, &s), TAKT_OK);
  takt_executor_t *e;
  ASSERT_EQ(takt_executor_create(ctx, TAKT_EXEC_TIDE, nullptr, &e), TAKT_OK);
  ASSERT_EQ(takt_executor_add_node(e, n), TAKT_OK);
  std_msgs::String msg;
  msg.data = "hello takt";
  ASSERT_EQ(takt_publish(p, &msg, sizeof msg), TAKT_OK);
  ASSERT_EQ(takt_executor_spin_some(e), TAKT_OK);
  EXPECT_EQ(got, "hello takt");
  // the descriptor's hooks are the ROS 1 codec
  uint8_t buf[64];
  int32_t len = takt_topic_type(t)->serialize(&msg, buf, sizeof buf);
  ASSERT_EQ(len, 4 + 10);
  std_msgs::String back;
  ASSERT_EQ(takt_topic_type(t)->deserialize(&back, buf, static_cast<uint32_t>(len)), TAKT_OK);
  EXPECT_EQ(back.data, "hello takt");
  EXPECT_EQ(takt_executor_destroy(e), TAKT_OK);
  EXPECT_EQ(takt_node_destroy(n), TAKT_OK);
  EXPECT_EQ(takt_topic_destroy(t), TAKT_OK);
  EXPECT_TRUE(takt_test::pools_empty(ctx, baseline));
  takt_context_destroy(ctx);
}
