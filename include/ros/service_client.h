// roscpp's <ros/service_client.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
