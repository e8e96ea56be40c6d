// roscpp's <ros/timer_options.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
