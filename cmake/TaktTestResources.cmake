# Which tests may share the machine, in CTest's resources (cmake/ctest-resources.json, which the
# Makefile's suites pass to ctest with --resource-spec-file, and two parallel slots more than the
# machine has CPUs: -j N+2).
#
# The machine is 64 "cpus" slots. A test takes 64 / N of them (N: the CPUs of the machine that
# configures the tree), so N of them run at once. A test declared RUN_SERIAL (the ROS tests: their
# peers' start-up — rosmaster, rospy, rostopic — takes a whole CPU at a time) also takes the one
# "serial" slot: one of them runs at a time, beside N - 1 other tests, so its peers take at most
# the CPU it was given and never starve the timing windows of a second ROS test. A test labelled
# "whole_machine" takes all 64 and runs alone. A test labelled "beside_exclusive" takes none and
# runs beside everything in one of ctest's two extra parallel slots: the 100,000-message QEMU link test, which
# would otherwise hold the others back for its minutes, and the roscpp examples' compilers (at the
# idle scheduling class: they take only the CPU time the tests leave).
# Without the resource file (a plain `ctest`), CTest counts no slots, and the ROS tests run beside
# each other.
#
# takt_assign_test_resources(): for the tests of the calling directory, at the end of each
# CMakeLists.txt that adds tests (CMake 3.25 sets test properties of its own directory only).
cmake_host_system_information(RESULT takt_test_cpus QUERY NUMBER_OF_LOGICAL_CORES)
if(takt_test_cpus LESS 1)
  set(takt_test_cpus 1)
elseif(takt_test_cpus GREATER 64)
  set(takt_test_cpus 64)
endif()
math(EXPR takt_test_share "64 / ${takt_test_cpus}")
function(takt_assign_test_resources)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    get_test_property(${t} RUN_SERIAL serial)
    get_test_property(${t} LABELS labels)
    get_test_property(${t} RESOURCE_GROUPS groups)
    if(groups)
      continue()
    elseif("whole_machine" IN_LIST labels)
      set_tests_properties(${t} PROPERTIES RUN_SERIAL FALSE RESOURCE_GROUPS "cpus:64")
    elseif(serial)
      # COST: started before the others (a fresh tree has no timings of its own to order by): one
      # at a time, they are the suite's longest chain
      get_test_property(${t} COST cost)
      if(NOT cost)
        set(cost 1000)
      endif()
      set_tests_properties(${t} PROPERTIES RUN_SERIAL FALSE RESOURCE_GROUPS "cpus:${takt_test_share},serial:1"
                           COST ${cost})
    elseif(NOT "beside_exclusive" IN_LIST labels)
      set_tests_properties(${t} PROPERTIES RESOURCE_GROUPS "cpus:${takt_test_share}")
    endif()
  endforeach()
endfunction()
