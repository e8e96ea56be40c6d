# CMake toolchain file for bare-metal Cortex-M with Debian's gcc-arm-none-eabi and newlib-nano.
# The CPU flags are the board's (fw/CMakeLists.txt, TAKT_BOARD).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "arm-none-eabi-size")
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "arm-none-eabi-objcopy")
# No operating system to link a test program against: the compiler checks build a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
