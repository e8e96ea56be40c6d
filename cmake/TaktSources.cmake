# The source files of each layer, shared by the main build (the POSIX port) and the firmware
# build (fw/, the Cortex-M port). Paths are relative to the source root.
set(TAKT_PORT_COMMON_SOURCES src/port/err.c src/port/portable.c)
set(TAKT_PORT_POSIX_SOURCES src/port/posix/port_posix.c src/port/posix/io_posix.c
    src/port/posix/shm_posix.c)
set(TAKT_PORT_CORTEXM_SOURCES src/port/cortexm/port_cortexm.c src/port/cortexm/uart.c
    src/port/cortexm/startup.c src/port/cortexm/atomic64.c src/port/cortexm/swi.c)
set(TAKT_CORE_SOURCES src/core/mem.c src/core/heap.c src/core/lock.c src/core/stats.c
    src/core/context.c src/core/topic.c src/core/timer.c src/core/service.c
    src/core/callback.c src/core/sync.c src/core/trace.c src/core/trace_perfetto.c)
set(TAKT_TIMING_SOURCES src/timing/timing.c)
set(TAKT_EXEC_SOURCES src/exec/executor.c src/exec/sizes.c src/exec/tide.c src/exec/batch.c
    src/exec/preempt.c src/exec/waitset.c src/exec/swi.c)
set(TAKT_TRANSPORT_SOURCES src/transport/transport.c src/transport/frame.c
    src/transport/link.c src/transport/daemon.c src/transport/bridge.c src/transport/describe.c
    src/transport/backends.c src/transport/backend_daemon.c)
set(TAKT_SHM_SOURCES src/shm/shm.c)
# ROS 1 (XML-RPC master and slave APIs, TCPROS, the ros1 bridge backend): portable C on the port
# contract, so the firmware build compiles it too.
set(TAKT_ROS1_SOURCES src/ros1/xmlrpc.c src/ros1/http.c src/ros1/tcpros.c src/ros1/master.c
    src/ros1/node.c src/ros1/io.c src/ros1/service.c src/ros1/master_server.c
    src/ros1/backend_ros1.c src/ros1/shmring.c)
# The transport layer on the Cortex-M port: the link over the UART driver instead of the one over
# the POSIX port's I/O (threads, sockets, ttys).
set(TAKT_TRANSPORT_CORTEXM_SOURCES src/transport/transport.c src/transport/frame.c
    src/transport/link_uart.c src/transport/daemon.c src/transport/bridge.c src/transport/describe.c
    src/transport/backends.c src/transport/backend_daemon.c)
