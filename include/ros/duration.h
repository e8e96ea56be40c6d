// roscpp's <ros/duration.h>: the durations are declared with the times.
#include <ros/time.h>
