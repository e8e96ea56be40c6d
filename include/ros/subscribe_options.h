// roscpp's <ros/subscribe_options.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
