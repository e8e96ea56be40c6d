// roscpp's <ros/single_subscriber_publisher.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
