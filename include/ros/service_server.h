// roscpp's <ros/service_server.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
