// roscpp's <ros/steady_timer_options.h>: SteadyTimerOptions is declared with the NodeHandle.
#include <ros/node_handle.h>
