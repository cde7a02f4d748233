# Cross-builds the bundle for 32-bit ARM Linux with hard float (Zynq-7000)
# with the GNU cross compiler: Debian's g++-arm-linux-gnueabihf, or a
# vendor's (PetaLinux, Yocto SDK) of the same prefix on PATH. Use:
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake
# The bundle's CMakeLists.txt adds the CPU and NEON flags of its device.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_ASM_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
