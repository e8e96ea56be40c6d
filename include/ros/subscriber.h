// roscpp's <ros/subscriber.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
