// roscpp's <ros/publisher.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
