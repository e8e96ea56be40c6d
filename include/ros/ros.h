// The roscpp-compatible API over takt: `#include <ros/ros.h>` as a ROS 1 node does.
// docs/ros1.md ("Porting a roscpp node") says what compiles unchanged and what differs.
#ifndef TAKT_ROS_ROS_H
#define TAKT_ROS_ROS_H

#include <ros/console.h>
#include <ros/exceptions.h>
#include <ros/init.h>
#include <ros/node_handle.h>
#include <ros/param.h>
#include <ros/service.h>
#include <ros/spinner.h>
#include <ros/time.h>
#include <ros/topic.h>

#include <iostream>  // as roscpp's headers bring it (ROS 1 code prints with std::cout)

// The boost headers roscpp's own headers bring with <ros/ros.h> (ROS 1 code uses boost::bind,
// boost::function, boost::make_shared, boost::mutex, boost::condition_variable,
// boost::shared_mutex, boost::lexical_cast, ... without including them), where boost is installed
// (it is wherever roscpp is).
#if defined(__has_include)
#if __has_include(<boost/bind/bind.hpp>) && __has_include(<boost/thread/mutex.hpp>)
#include <boost/array.hpp>
#include <boost/bind/bind.hpp>
#include <boost/function.hpp>
#include <boost/lexical_cast.hpp>
#include <boost/make_shared.hpp>
#include <boost/shared_array.hpp>
#include <boost/shared_ptr.hpp>
#include <boost/thread/condition_variable.hpp>
#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>
#include <boost/thread/recursive_mutex.hpp>
#include <boost/thread/shared_mutex.hpp>
#include <boost/weak_ptr.hpp>
#endif
#endif

#endif
