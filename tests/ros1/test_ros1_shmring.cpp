// The slots of the ROS 1 layer's same-host transport (src/ros1/shmring.c), both sides in one
// process through two mappings of one object, deterministic: messages in number order; a full
// ring drops the oldest (or, drop-newest, the new one); the slot the consumer holds is never
// written (its turn's message takes the next number, which the consumer skips to); a message
// above a slot reaches the consumer as its length alone; an object that is not one (another
// prefix, token, magic, size, or written before) is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "ros1/shmring.h"
#include "takt/port_shm.h"
}

namespace {

std::string name_of(const char *what) {
  return std::string(TAKT__R1SHM_PREFIX) + "test." + std::to_string(getpid()) + "." + what;
}

struct Pair {
  takt__r1shm_t sub{}, pub{};
  std::string name;
  Pair(const char *what, uint32_t slots, uint32_t cap) : name(name_of(what)) {
    EXPECT_EQ(takt__r1shm_create(&sub, name.c_str(), slots, cap, 0x1234u), TAKT_OK);
    EXPECT_EQ(takt__r1shm_open(&pub, name.c_str(), 0x1234u), TAKT_OK);
    takt__r1shm_unlink(name.c_str());
  }
  ~Pair() {
    takt__r1shm_close(&pub);
    takt__r1shm_close(&sub);
  }
  takt_err_t put(uint8_t v, uint32_t len = 8, bool newest = false) {
    std::vector<uint8_t> b(len, v);
    return takt__r1shm_put(&pub, b.data(), len, nullptr, 1000 + v, newest);
  }
  // every message queued: its first byte (or 255 + length for one above a slot)
  std::vector<int> drain() {
    std::vector<int> got;
    const uint8_t *p;
    uint32_t len;
    bool big, more;
    int64_t at;
    while (takt__r1shm_borrow(&sub, &p, &len, &big, &at, &more) || more) {
      if (more) continue;
      got.push_back(big ? 255 + (int)len : p[0]);
      takt__r1shm_release(&sub);
    }
    return got;
  }
};

TEST(Ros1ShmRing, MessagesInOrderAndTheOldestDroppedWhenFull) {
  Pair r("order", 4, 64);
  for (uint8_t v = 1; v <= 3; v++) EXPECT_EQ(r.put(v), TAKT_OK);
  EXPECT_EQ(r.drain(), (std::vector<int>{1, 2, 3}));
  for (uint8_t v = 10; v < 14; v++) EXPECT_EQ(r.put(v, 8u + (v - 10u)), TAKT_OK);  // messages 4..7
  EXPECT_FALSE(r.pub.overwrote);
  EXPECT_EQ(r.put(14), 1);  // written over 10: its number and length told (the publisher's counts)
  EXPECT_TRUE(r.pub.overwrote);
  EXPECT_EQ(r.pub.dropped_seq, 4u);
  EXPECT_EQ(r.pub.dropped_len, 8u);
  EXPECT_EQ(r.put(15), 1);  // over 11
  EXPECT_EQ(r.pub.dropped_seq, 5u);
  EXPECT_EQ(r.pub.dropped_len, 9u);
  EXPECT_EQ(r.drain(), (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(r.drain(), std::vector<int>{});
}

// A message above a slot that takes the slot of one not read: TAKT_ESIZE, and the one written
// over is told as for any other put.
TEST(Ros1ShmRing, AMessageAboveASlotWritingOverOneNotReadTellsBoth) {
  Pair r("esize_over", 2, 64);
  EXPECT_EQ(r.put(1), TAKT_OK);
  EXPECT_EQ(r.put(2, 20), TAKT_OK);
  EXPECT_EQ(r.put(3, 100), TAKT_ESIZE);
  EXPECT_TRUE(r.pub.overwrote);
  EXPECT_EQ(r.pub.dropped_seq, 1u);
  EXPECT_EQ(r.pub.dropped_len, 8u);
  EXPECT_EQ(r.drain(), (std::vector<int>{2, 255 + 100}));
  EXPECT_EQ(r.put(4), TAKT_OK);
  EXPECT_FALSE(r.pub.overwrote);
}

TEST(Ros1ShmRing, DropNewestKeepsWhatIsQueued) {
  Pair r("newest", 2, 64);
  EXPECT_EQ(r.put(1, 8, true), TAKT_OK);
  EXPECT_EQ(r.put(2, 8, true), TAKT_OK);
  EXPECT_EQ(r.put(3, 8, true), TAKT_EFULL);
  EXPECT_EQ(r.drain(), (std::vector<int>{1, 2}));
  EXPECT_EQ(r.put(4, 8, true), TAKT_OK);
  EXPECT_EQ(r.drain(), (std::vector<int>{4}));
}

// The consumer holds message 1 (its function runs) while the producer laps it: the held slot is
// not written, the message whose turn it was takes the next number; once let go, the consumer
// goes on with the newest ones in order and no message is handed on twice.
TEST(Ros1ShmRing, TheHeldSlotIsNeverWrittenAndItsNumberIsSkipped) {
  Pair r("held", 3, 64);
  EXPECT_EQ(r.put(1), TAKT_OK);
  const uint8_t *p;
  uint32_t len;
  bool big, more;
  int64_t at;
  ASSERT_TRUE(takt__r1shm_borrow(&r.sub, &p, &len, &big, &at, &more));
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(at, 1001);
  EXPECT_EQ(r.put(2), TAKT_OK);
  EXPECT_EQ(r.put(3), TAKT_OK);
  EXPECT_EQ(r.put(4), 1);  // number 4 is the held slot's: skipped; 4 takes 5, over 2
  EXPECT_EQ(p[0], 1);      // the held message is intact
  EXPECT_EQ(r.put(5), 1);  // over 3
  EXPECT_EQ(p[0], 1);
  takt__r1shm_release(&r.sub);
  EXPECT_EQ(r.drain(), (std::vector<int>{4, 5}));
  EXPECT_EQ(r.put(6), TAKT_OK);
  EXPECT_EQ(r.drain(), (std::vector<int>{6}));
}

// A consumer that keeps up (each message freed before the next is written) reads every message
// from one buffer, the last one's: the warm one. One that lags reads each from a buffer of its
// own, every message intact; once it has caught up, one buffer again.
TEST(Ros1ShmRing, AConsumerThatKeepsUpReadsOneBuffer) {
  Pair r("warm", 4, 64);
  auto one = [&](uint8_t v) {  // put v, borrow it: where its bytes are
    EXPECT_EQ(r.put(v), TAKT_OK);
    const uint8_t *p = nullptr;
    uint32_t len;
    bool big, more;
    int64_t at;
    EXPECT_TRUE(takt__r1shm_borrow(&r.sub, &p, &len, &big, &at, &more));
    EXPECT_EQ(p[0], v);
    takt__r1shm_release(&r.sub);
    return p;
  };
  const uint8_t *first = one(1);
  for (uint8_t v = 2; v < 12; v++) EXPECT_EQ(one(v), first) << int(v);
  // lagging: three queued at once, each in a buffer of its own, then drained in order
  for (uint8_t v = 20; v < 23; v++) EXPECT_EQ(r.put(v), TAKT_OK);
  std::vector<const uint8_t *> where;
  for (uint8_t v = 20; v < 23; v++) {
    const uint8_t *p = nullptr;
    uint32_t len;
    bool big, more;
    int64_t at;
    ASSERT_TRUE(takt__r1shm_borrow(&r.sub, &p, &len, &big, &at, &more));
    EXPECT_EQ(p[0], v);
    EXPECT_EQ(std::vector<uint8_t>(p, p + len), std::vector<uint8_t>(8, v));
    where.push_back(p);
    takt__r1shm_release(&r.sub);
  }
  EXPECT_NE(where[0], where[1]);
  EXPECT_NE(where[1], where[2]);
  EXPECT_NE(where[0], where[2]);
  const uint8_t *warm = one(30);
  EXPECT_EQ(warm, where[2]);  // the last message's buffer, freed
  EXPECT_EQ(one(31), warm);
}

TEST(Ros1ShmRing, AMessageAboveASlotArrivesAsItsLengthAlone) {
  Pair r("big", 2, 16);
  EXPECT_EQ(r.put(1, 16), TAKT_OK);
  EXPECT_EQ(r.put(2, 17), TAKT_ESIZE);
  EXPECT_EQ(r.drain(), (std::vector<int>{1, 255 + 17}));
}

TEST(Ros1ShmRing, AStampReplacesBytesFourToEleven) {
  Pair r("stamp", 2, 64);
  uint8_t msg[16], stamp[8];
  std::memset(msg, 7, sizeof msg);
  std::memset(stamp, 9, sizeof stamp);
  EXPECT_EQ(takt__r1shm_put(&r.pub, msg, sizeof msg, stamp, 0, false), TAKT_OK);
  const uint8_t *p;
  uint32_t len;
  bool big, more;
  int64_t at;
  ASSERT_TRUE(takt__r1shm_borrow(&r.sub, &p, &len, &big, &at, &more));
  ASSERT_EQ(len, 16u);
  for (uint32_t i = 0; i < 16; i++) EXPECT_EQ(p[i], i >= 4 && i < 12 ? 9 : 7) << i;
  takt__r1shm_release(&r.sub);
}

// An object has the queue's slots, at least 2, at most 4096 and as many as 64 MiB hold (each
// slot: a 64-byte line and its bytes rounded to 64), and it can be made.
TEST(Ros1ShmRing, TheSlotsAreTheQueueWithinTheirBounds) {
  EXPECT_EQ(takt__r1shm_slots_for(8, 65536), 8u);
  EXPECT_EQ(takt__r1shm_slots_for(0, 64), 2u);
  EXPECT_EQ(takt__r1shm_slots_for(1, 64), 2u);
  EXPECT_EQ(takt__r1shm_slots_for(100000, 64), TAKT__R1SHM_MAX_SLOTS);
  const uint32_t mb = 1u << 20;  // 64 MiB less the object's head hold 63 slots of 1 MiB + 64
  EXPECT_EQ(takt__r1shm_slots_for(1000, mb), 63u);
  EXPECT_EQ(takt__r1shm_slots_for(1000, 64u << 20), 2u);  // one slot alone is too big: still 2
  EXPECT_EQ(takt__r1shm_slots_for(1000, mb - 64), 63u);
  Pair p("bounds", takt__r1shm_slots_for(1000, 1000), 1000);
  EXPECT_EQ(p.sub.slots, 1000u);
  EXPECT_EQ(p.pub.slots, 1000u);
}

TEST(Ros1ShmRing, WhatIsNotOneIsRefused) {
  takt__r1shm_t sub{}, pub{};
  // another prefix: never opened
  EXPECT_EQ(takt__r1shm_open(&pub, "/etc-passwd", 1), TAKT_ETYPE);
  std::string name = name_of("refused");
  ASSERT_EQ(takt__r1shm_create(&sub, name.c_str(), 2, 64, 42), TAKT_OK);
  EXPECT_EQ(takt__r1shm_open(&pub, name.c_str(), 43), TAKT_ETYPE);  // another token
  EXPECT_EQ(pub.map, nullptr);
  // taken once: its name is gone (the publisher removed it), no second publisher maps it
  takt__r1shm_t first{};
  ASSERT_EQ(takt__r1shm_open(&first, name.c_str(), 42), TAKT_OK);  // and removes the name
  EXPECT_EQ(takt__r1shm_open(&pub, name.c_str(), 42), TAKT_ENOENT);
  takt__r1shm_close(&first);
  takt__r1shm_close(&sub);
  EXPECT_EQ(takt__r1shm_create(&sub, "/takt-r1.bad", 1, 64, 1), TAKT_EINVAL);  // one slot
  // an object of the prefix that is not one: too small, a bad magic, slots beyond its size
  std::string other = name_of("other");
  takt_port_shm_t m;
  ASSERT_EQ(takt_port_shm_create(other.c_str(), 64, 0600, &m), TAKT_OK);
  EXPECT_EQ(takt__r1shm_open(&pub, other.c_str(), 0), TAKT_ETYPE);  // magic 0
  std::memcpy(m.addr, "TKT1RING", 8);  // the magic, little-endian: "TKT1RING" read as u64
  uint32_t slots = 4000, cap = 1u << 20;
  std::memcpy(static_cast<uint8_t *>(m.addr) + 16, &slots, 4);
  std::memcpy(static_cast<uint8_t *>(m.addr) + 20, &cap, 4);
  EXPECT_EQ(takt__r1shm_open(&pub, other.c_str(), 0), TAKT_ETYPE);  // its slots beyond 64 bytes
  takt_port_shm_close(&m);
  (void)takt_port_shm_unlink(other.c_str());
}

}  // namespace
