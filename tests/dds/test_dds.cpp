#include <gtest/gtest.h>
TEST(Dds, Placeholder) {}
