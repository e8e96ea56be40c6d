// roscpp's <ros/advertise_service_options.h>: declared with the NodeHandle.
#include <ros/node_handle.h>
