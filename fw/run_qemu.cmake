# Run a firmware test image in QEMU and pass or fail on its semihosting exit status (ctest runs
# it: cmake -DQEMU=... -DBOARD=mps2-an386 -DELF=... -DGROUPS="tide_batch" -DWORKDIR=... -P).
# UART0 is the console on stdout, UART1 goes nowhere, UART2 reads WORKDIR/rx.in (the bytes
# fw/tests/test_uart.c expects: 1500 of "0123...xyz"[(i * 7) % 36]).
# Guest time: -icount shift=5 counts 32 ns per instruction (about a 25 MHz core's pace), so
# guest-side timings do not depend on the host's load; with SLEEP=off an idle (WFI) guest jumps
# to its next timer at once (deterministic, and fast), with SLEEP=on it waits in real time
# (needed when the host feeds it: the receive test).
foreach(v QEMU BOARD ELF GROUPS WORKDIR SLEEP)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_qemu.cmake: -D${v}=... missing")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORKDIR})
set(alphabet "0123456789abcdefghijklmnopqrstuvwxyz")
set(rx "")
foreach(i RANGE 0 1499)
  math(EXPR k "(${i} * 7) % 36")
  string(SUBSTRING "${alphabet}" ${k} 1 c)
  string(APPEND rx "${c}")
endforeach()
file(WRITE ${WORKDIR}/rx.in "${rx}")
file(WRITE ${WORKDIR}/rx.out "")
execute_process(
  COMMAND ${QEMU} -M ${BOARD} -display none -monitor none -serial stdio -serial null
          -chardev pipe,id=rx,path=${WORKDIR}/rx -serial chardev:rx
          -semihosting-config enable=on,target=native -icount shift=5,sleep=${SLEEP}
          -kernel ${ELF} -append "${GROUPS}"
  TIMEOUT 90
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message("${out}${err}")
# A test of a failure names the status and the line it must end with (EXPECT_STATUS, EXPECT).
if(NOT DEFINED EXPECT_STATUS)
  set(EXPECT_STATUS 0)
  set(EXPECT "PASSED: [0-9]+ checks, 0 failed")
endif()
if(NOT rc EQUAL EXPECT_STATUS)
  message(FATAL_ERROR "firmware ${ELF} on ${BOARD} (${GROUPS}): exit status ${rc}, not ${EXPECT_STATUS}")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "firmware ${ELF} on ${BOARD} (${GROUPS}): no line matching '${EXPECT}'")
endif()
