// roscpp's <ros/timer.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
