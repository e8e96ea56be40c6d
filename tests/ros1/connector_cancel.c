// A test's reach into the ros1 layer's connectors (src/ros1/ros1_impl.h): their cancel signalled
// as an unsubscribe's is, without the unsubscribe (test_ros1_robust: a signal that comes late,
// after the connection it was meant for).
#include "ros1/ros1_impl.h"

void test_ros1_signal_connector_cancels(takt_ros1_node_t *n);

void test_ros1_signal_connector_cancels(takt_ros1_node_t *n) {
  for (uint32_t i = 0; i < n->conns_started; i++) takt_io_wake_signal(n->conns[i].cancel);
}
