# Included by the main build: when the Cortex-M toolchain and QEMU are installed (tools/deps.sh),
# cross-build the firmware for both MPS2 boards (fw/CMakeLists.txt, one external project per
# board, rebuilt with the main build) and run its tests in QEMU under ctest.
find_program(TAKT_ARM_GCC arm-none-eabi-gcc)
find_program(TAKT_QEMU_ARM qemu-system-arm)
if(NOT TAKT_ARM_GCC)
  message(STATUS "takt firmware: no arm-none-eabi-gcc (tools/deps.sh installs it): not built")
  return()
endif()
include(ExternalProject)
set(TAKT_FW_BOARDS mps2-an386 mps2-an500)
foreach(board ${TAKT_FW_BOARDS})
  set(fw_bin ${CMAKE_BINARY_DIR}/fw/${board})
  ExternalProject_Add(takt_fw_${board}
    SOURCE_DIR ${CMAKE_SOURCE_DIR}/fw
    BINARY_DIR ${fw_bin}
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/arm-none-eabi.cmake
               -DTAKT_BOARD=${board} -DCMAKE_BUILD_TYPE=MinSizeRel
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    USES_TERMINAL_BUILD OFF)
  if(TAKT_BUILD_TESTS AND TAKT_QEMU_ARM)
    foreach(group tide_batch clock uart uart_rx frame swi hard urt_app)
      set(sleep off) # guest time independent of the host (fw/run_qemu.cmake)
      if(group STREQUAL "uart_rx" OR group STREQUAL "clock")
        # the host feeds it bytes in real time / it sleeps for long (QEMU 7.2 with sleep=off
        # wakes a WFI that waits several milliseconds at twice its time: docs/mcu.md)
        set(sleep on)
      endif()
      add_test(NAME fw_${group}_${board}
               COMMAND ${CMAKE_COMMAND} -DQEMU=${TAKT_QEMU_ARM} -DBOARD=${board}
                       -DELF=${fw_bin}/takt-fw-tests.elf -DGROUPS=${group} -DSLEEP=${sleep}
                       -DWORKDIR=${fw_bin}/run-${group} -P ${CMAKE_SOURCE_DIR}/fw/run_qemu.cmake)
      set_tests_properties(fw_${group}_${board} PROPERTIES TIMEOUT 120 LABELS firmware)
    endforeach()
    # failures end QEMU with their status and a line after the console's pending output
    foreach(fail "fault;4;fault: an undefined instruction next\ntakt: fault: exception 0x00000003"
                 "mutex_twice;70;mutex: taken twice next\ntakt: fatal: a takt mutex taken twice"
                 # a failure from a handler at the UARTs' level or above, or with interrupts masked
                 "fail_irq_uart_level;1;line 39 of 40 [.]+\nirq6: boom: invalid argument"
                 "fail_irq_top;1;line 39 of 40 [.]+\nirq6: boom: invalid argument"
                 "fail_masked;1;line 39 of 40 [.]+\nmasked: boom: invalid argument")
      list(GET fail 0 group)
      list(GET fail 1 status)
      list(GET fail 2 expect)
      add_test(NAME fw_${group}_${board}
               COMMAND ${CMAKE_COMMAND} -DQEMU=${TAKT_QEMU_ARM} -DBOARD=${board}
                       -DELF=${fw_bin}/takt-fw-tests.elf -DGROUPS=${group} -DSLEEP=off
                       -DWORKDIR=${fw_bin}/run-${group} -DEXPECT_STATUS=${status}
                       "-DEXPECT=${expect}" -P ${CMAKE_SOURCE_DIR}/fw/run_qemu.cmake)
      set_tests_properties(fw_${group}_${board} PROPERTIES TIMEOUT 60 LABELS firmware)
    endforeach()
    # the MCU side of a link, the host on a pseudo-terminal (fw/run_link.py): bad input on the
    # UART; the reliable stream to the agent through injected faults — 100,000 messages on the
    # M7 (PoDS's core), 5,000 on the M4
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    set(link_run ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/fw/run_link.py --qemu ${TAKT_QEMU_ARM}
        --board ${board} --elf ${fw_bin}/takt-fw-tests.elf)
    add_test(NAME fw_link_bad_input_${board}
             COMMAND ${link_run} --group link_bad_input --workdir ${fw_bin}/run-link_bad_input)
    set_tests_properties(fw_link_bad_input_${board} PROPERTIES TIMEOUT 60 LABELS firmware)
    # frame preemption on the paced UART: a long frame cut for an urgent one (the host reads the line)
    add_test(NAME fw_link_cut_${board}
             COMMAND ${link_run} --group link_cut --workdir ${fw_bin}/run-link_cut)
    set_tests_properties(fw_link_cut_${board} PROPERTIES TIMEOUT 60 LABELS firmware)
    # ...and suspended and resumed where it stopped
    add_test(NAME fw_link_suspend_${board}
             COMMAND ${link_run} --group link_suspend --workdir ${fw_bin}/run-link_suspend)
    set_tests_properties(fw_link_suspend_${board} PROPERTIES TIMEOUT 60 LABELS firmware)
    # The agent's ACKNACKs paced at 38400 baud for the long run rather than 115200: a byte into
    # the guest costs QEMU about 60 µs of its own time (docs/mcu.md), and at 115200 the
    # acknowledgement direction is full; at 38400 the stream is as fast (20,000 messages in 29 s
    # either way) and QEMU and the agent take 28 s of CPU instead of 38, which the tests beside
    # it get back.
    if(board STREQUAL "mps2-an500")
      set(count 100000)
      set(limit 470)
      set(ack_pace 38400)
    else()
      set(count 5000)
      set(limit 60)
      set(ack_pace 115200)
    endif()
    add_test(NAME fw_link_reliable_${board}
             COMMAND ${link_run} --group link_reliable --count ${count} --agent $<TARGET_FILE:takt-run>
                     --workdir ${fw_bin}/run-link_reliable --timeout ${limit}
                     --host-link-prefix emu:baud=${ack_pace}/)
    # a firmware that restarts while the agent listens, its starts alike (-icount): the second
    # start's stream taken as a new one (the port's count of starts in its incarnation)
    add_test(NAME fw_link_restart_${board}
             COMMAND ${link_run} --group link_restart --count 35 --icount
                     --agent $<TARGET_FILE:takt-run> --workdir ${fw_bin}/run-link_restart
                     --timeout 60)
    set_tests_properties(fw_link_restart_${board} PROPERTIES TIMEOUT 90 LABELS firmware)
    # the micro-ROS-like mode on the MCU: every send waits for its acknowledgement (in WFI, woken
    # by the link interrupt)
    add_test(NAME fw_link_reliable_microros_${board}
             COMMAND ${link_run} --group link_reliable --count 300 --microros
                     --agent $<TARGET_FILE:takt-run> --workdir ${fw_bin}/run-link_reliable_microros
                     --timeout 60)
    set_tests_properties(fw_link_reliable_microros_${board} PROPERTIES TIMEOUT 90 LABELS firmware)
    math(EXPR ctest_limit "${limit} + 30")
    # COST: a parallel ctest starts the longest first (on a fresh tree it has no timings of its
    # own), so the 100,000-message run overlaps the others instead of ending alone; and it runs
    # beside the exclusive (serial) ROS tests too (cmake/TaktTestResources.cmake)
    set(link_labels firmware)
    if(count GREATER 10000)
      list(APPEND link_labels beside_exclusive)
    endif()
    set_tests_properties(fw_link_reliable_${board} PROPERTIES TIMEOUT ${ctest_limit}
                         LABELS "${link_labels}" COST ${count})
    # ROS from the MCU: examples/mcu/ros_node.c on ROS 1 through its agent (fw/run_ros1.py):
    # a rospy listener and talker, rostopic and rosnode against rosmaster, and on the M7 once
    # more against the agent's embedded master
    if(EXISTS /usr/bin/rosmaster)
      set(ros_masters rosmaster)
      if(board STREQUAL "mps2-an500")
        list(APPEND ros_masters embedded)
      endif()
      foreach(master ${ros_masters})
        set(name fw_ros1_node_${board})
        if(master STREQUAL "embedded")
          set(name fw_ros1_node_embedded_master_${board})
        endif()
        add_test(NAME ${name}
                 COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/fw/run_ros1.py --qemu ${TAKT_QEMU_ARM}
                         --board ${board} --elf ${fw_bin}/takt-fw-ros.elf --agent $<TARGET_FILE:takt-run>
                         --workdir ${fw_bin}/run-ros1-${master} --master ${master})
        set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS "firmware;ros1")
      endforeach()
    endif()
    # ROS 2 from the MCU: the same firmware on a DDS domain through its agent (fw/run_ros2.py),
    # against rclpy (the Python 3.12 venv of tools/deps_ros2.sh)
    if(TAKT_WITH_DDS AND board STREQUAL "mps2-an500" AND EXISTS ${CMAKE_SOURCE_DIR}/.venv-ros2/bin/python)
      add_test(NAME fw_ros2_node_${board}
               COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/fw/run_ros2.py --qemu ${TAKT_QEMU_ARM}
                       --board ${board} --elf ${fw_bin}/takt-fw-ros.elf --agent $<TARGET_FILE:takt-run>
                       --venv ${CMAKE_SOURCE_DIR}/.venv-ros2 --workdir ${fw_bin}/run-ros2 --domain 97)
      set_tests_properties(fw_ros2_node_${board} PROPERTIES TIMEOUT 150 LABELS "firmware;dds")
    endif()
    # examples/mcu/pods_mcu.c names tide alone: the other executor kinds stay out of its image
    add_test(NAME fw_links_named_kinds_${board}
             COMMAND ${CMAKE_COMMAND} -DMAP=${fw_bin}/takt-fw-pods.map -DLIB=libtakt_exec.a -DWANT=tide.c.obj
                     -DNOT_WANT=batch.c.obj,preempt.c.obj,waitset.c.obj,swi.c.obj
                     -P ${CMAKE_SOURCE_DIR}/fw/check_map.cmake)
    set_tests_properties(fw_links_named_kinds_${board} PROPERTIES TIMEOUT 30 LABELS firmware)
    # the per-entity table on the 32-bit target: one JSON line, 4-byte pointers
    add_test(NAME fw_entity_sizes_${board}
             COMMAND ${TAKT_QEMU_ARM} -M ${board} -display none -monitor none -serial stdio
                     -semihosting-config enable=on,target=native -kernel ${fw_bin}/takt-fw-sizes.elf)
    set_tests_properties(fw_entity_sizes_${board} PROPERTIES TIMEOUT 60 LABELS firmware
                         PASS_REGULAR_EXPRESSION "\"pointer_bytes\": 4, \"rows\": \\[\\{\"entity\": \"context\"")
  endif()
endforeach()
if(TAKT_BUILD_TESTS AND NOT TAKT_QEMU_ARM)
  message(STATUS "takt firmware: no qemu-system-arm (tools/deps.sh installs it): tests not run")
endif()
