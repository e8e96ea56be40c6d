// roscpp's <ros/wall_timer_options.h>: WallTimerOptions is declared with the NodeHandle.
#include <ros/node_handle.h>
